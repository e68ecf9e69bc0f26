#include "sandbox/run_spec.h"

namespace aevatar::sandbox {

std::optional<Language> ParseLanguage(std::string_view name) {
  if (name == "python") return Language::kPython;
  if (name == "javascript") return Language::kJavaScript;
  if (name == "typescript") return Language::kTypeScript;
  if (name == "bash") return Language::kBash;
  return std::nullopt;
}

std::string_view LanguageName(Language language) {
  switch (language) {
    case Language::kPython:
      return "python";
    case Language::kJavaScript:
      return "javascript";
    case Language::kTypeScript:
      return "typescript";
    case Language::kBash:
      return "bash";
  }
  return "unknown";
}

int EffectiveCpuLimitSecs(const Limits& limits) {
  return limits.cpu_secs > 0 ? limits.cpu_secs : limits.wall_timeout_secs + 1;
}

std::optional<BackendKind> ParseBackend(std::string_view name) {
  if (name == "native") return BackendKind::kNative;
  if (name == "gvisor") return BackendKind::kGvisor;
  return std::nullopt;
}

std::string_view BackendName(BackendKind kind) {
  return kind == BackendKind::kNative ? "native" : "gvisor";
}

std::string_view VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kOk:
      return "ok";
    case Verdict::kNonzeroExit:
      return "nonzero_exit";
    case Verdict::kSignaled:
      return "signaled";
    case Verdict::kWallTimeout:
      return "wall_timeout";
    case Verdict::kCpuLimit:
      return "cpu_limit";
    case Verdict::kMemoryLimit:
      return "memory_limit";
    case Verdict::kOutputLimit:
      return "output_limit";
    case Verdict::kPidsLimit:
      return "pids_limit";
    case Verdict::kFileSizeLimit:
      return "file_size_limit";
  }
  return "unknown";
}

}  // namespace aevatar::sandbox
