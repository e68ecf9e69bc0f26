#include "base/log.h"

#include <unistd.h>

#include <atomic>
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

namespace {

// [A-Za-z0-9_-]: agent keys and base64url JWS segments.
bool IsKeyChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

// RFC 6750's b64token: [A-Za-z0-9._~+/=-].
bool IsBearerChar(char c) {
  return IsKeyChar(c) || c == '.' || c == '~' || c == '+' || c == '/' || c == '=';
}

bool IsSpace(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

size_t SkipWhile(std::string_view text, size_t at, bool (*keep)(char)) {
  while (at < text.size() && keep(text[at])) ++at;
  return at;
}

// Where the secret starting at `at` ends, or `at` when none starts there:
// `nyxid_ag_<key chars>`, `Bearer|bearer <spaces> <b64token>`, or a compact
// JWS `eyJ<key chars>.<key chars>.<key chars>`.
size_t SecretEnd(std::string_view text, size_t at) {
  const std::string_view rest = text.substr(at);
  if (rest.starts_with("nyxid_ag_")) {
    const size_t end = SkipWhile(text, at + 9, IsKeyChar);
    if (end > at + 9) return end;
  } else if (rest.starts_with("Bearer") || rest.starts_with("bearer")) {
    const size_t token = SkipWhile(text, at + 6, IsSpace);
    const size_t end = SkipWhile(text, token, IsBearerChar);
    if (token > at + 6 && end > token) return end;
  } else if (rest.starts_with("eyJ")) {
    size_t end = SkipWhile(text, at + 3, IsKeyChar);
    for (int dot = 0; dot < 2; ++dot) {
      if (end == text.size() || text[end] != '.') return at;
      end = SkipWhile(text, end + 1, IsKeyChar);
    }
    return end;
  }
  return at;
}

}  // namespace

std::string Redact(std::string_view text) {
  // A scan, not std::regex: every log line passes through here, and the
  // regex took ~7 µs a line.
  std::string out;
  out.reserve(text.size());
  for (size_t at = 0; at < text.size();) {
    const size_t end = SecretEnd(text, at);
    if (end > at) {
      out += "[redacted]";
      at = end;
    } else {
      out += text[at++];
    }
  }
  return out;
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
