#include "base/log.h"

#include <unistd.h>

#include <atomic>
#include <regex>

#include "base/clock.h"

namespace aevatar::base {
namespace {

std::atomic<int> g_min_level{static_cast<int>(LogLevel::kInfo)};
std::atomic<int> g_fd{2};

const char* LevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kError:
      return "error";
  }
  return "info";
}

}  // namespace

void ConfigureLog(LogLevel min_level, int fd) {
  g_min_level = static_cast<int>(min_level);
  g_fd = fd;
}

std::string Redact(std::string_view text) {
  // Compiled once; std::regex is slow but log volume is small.
  static const std::regex kPatterns(
      R"((nyxid_ag_[A-Za-z0-9_\-]+)|((Bearer|bearer)\s+[A-Za-z0-9._~+/=\-]+)|(eyJ[A-Za-z0-9_\-]*\.[A-Za-z0-9_\-]*\.[A-Za-z0-9_\-]*))");
  return std::regex_replace(std::string(text), kPatterns, "[redacted]");
}

void Log(LogLevel level, std::string_view event, std::string_view tag,
         const nlohmann::json& fields) {
  if (static_cast<int>(level) < g_min_level.load()) return;
  nlohmann::json line = {
      {"ts", FormatUtcMillis(NowUnixMs())}, {"level", LevelName(level)}, {"event", event}};
  if (!tag.empty()) line["tag"] = tag;
  if (fields.is_object()) {
    for (const auto& [key, value] : fields.items()) line[key] = value;
  }
  std::string text =
      Redact(line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)) + "\n";
  // One write per line keeps concurrent lines whole.
  [[maybe_unused]] ssize_t n = ::write(g_fd.load(), text.data(), text.size());
}

}  // namespace aevatar::base
