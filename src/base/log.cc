#include "base/log.h"

#include <unistd.h>

#include <atomic>
#include <regex>
#include <utility>

#include "base/clock.h"
#include "base/log_context.h"

namespace aevatar::base {
namespace {

std::atomic<int> g_min_level{static_cast<int>(LogLevel::kInfo)};
std::atomic<int> g_fd{2};
std::atomic<int> g_format{static_cast<int>(LogFormat::kJson)};
thread_local std::string t_request_id;

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

// A text-format value: bare when it is a plain word, else JSON-quoted so the
// line still splits unambiguously on spaces.
std::string TextValue(const nlohmann::json& value) {
  if (!value.is_string()) {
    return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  const std::string& text = value.get_ref<const std::string&>();
  bool plain = !text.empty();
  for (unsigned char c : text) {
    if (c <= ' ' || c == '"' || c == '=' || c == '\\' || c >= 0x7f) plain = false;
  }
  return plain ? text : value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string TextLine(const nlohmann::json& line) {
  std::string out =
      line.value("ts", "") + " " + line.value("level", "") + " " + line.value("event", "");
  for (const auto& [key, value] : line.items()) {
    if (key == "ts" || key == "level" || key == "event") continue;
    out += " " + key + "=" + TextValue(value);
  }
  return out;
}

}  // namespace

void SetLogFormat(LogFormat format) { g_format = static_cast<int>(format); }

ScopedRequestId::ScopedRequestId(std::string request_id)
    : previous_(std::exchange(t_request_id, std::move(request_id))) {}

ScopedRequestId::~ScopedRequestId() { t_request_id = std::move(previous_); }

const std::string& CurrentRequestId() { return t_request_id; }

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
  if (!t_request_id.empty()) line["request_id"] = t_request_id;
  if (fields.is_object()) {
    for (const auto& [key, value] : fields.items()) line[key] = value;
  }
  std::string text =
      Redact(g_format.load() == static_cast<int>(LogFormat::kText)
                 ? TextLine(line)
                 : line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)) +
      "\n";
  // One write per line keeps concurrent lines whole.
  [[maybe_unused]] ssize_t n = ::write(g_fd.load(), text.data(), text.size());
}

}  // namespace aevatar::base
