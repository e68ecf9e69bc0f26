#include "sandbox/runtime_env.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/api_error.h"
#include "os/process.h"
#include "sandbox/rootfs_plan.h"

namespace aevatar::sandbox {
namespace {

namespace fs = std::filesystem;

bool IsDirectory(const fs::path& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

absl::Status Missing(const RuntimeEnv& env, std::string_view what) {
  return absl::FailedPreconditionError(
      absl::StrCat("runtime \"", env.name, "\" (", std::string(LanguageName(env.language)),
                   "): its root ", env.root, " ", std::string(what)));
}

}  // namespace

absl::StatusOr<RuntimeEnv> ParseRuntimeFlag(std::string_view text, bool root_required) {
  const size_t equals = text.find('=');
  if (equals == std::string_view::npos) {
    return absl::InvalidArgumentError(root_required ? "a runtime is NAME=LANGUAGE:ROOT"
                                                    : "a runtime is NAME=LANGUAGE[:ROOT]");
  }
  RuntimeEnv env;
  env.name = std::string(text.substr(0, equals));
  if (absl::Status st = ValidateRuntimeName(env.name); !st.ok()) return st;
  const std::string_view rest = text.substr(equals + 1);
  const size_t colon = rest.find(':');
  const auto language = ParseLanguage(rest.substr(0, colon));
  if (!language) {
    return absl::InvalidArgumentError(absl::StrCat(
        "runtime \"", env.name, "\": the language must be python, javascript, typescript or bash"));
  }
  env.language = *language;
  if (colon != std::string_view::npos) env.root = std::string(rest.substr(colon + 1));
  if (root_required && env.root.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("runtime \"", env.name, "\" needs a root: NAME=LANGUAGE:ROOT"));
  }
  return env;
}

absl::Status CheckRuntimeRoot(const RuntimeEnv& env) {
  if (env.root.empty() || env.root[0] != '/') return Missing(env, "is not an absolute path");
  if (env.root == kRootMountPoint ||
      absl::StartsWith(env.root, absl::StrCat(kRootMountPoint, "/"))) {
    return Missing(env, "lies under /tmp, which the sandbox's own root hides");
  }
  const fs::path root(env.root);
  std::error_code ec;
  const fs::file_status status = fs::status(root, ec);
  if (ec || !fs::is_directory(status)) return Missing(env, "is not a directory");
  const fs::perms perms = status.permissions();
  if ((perms & (fs::perms::group_write | fs::perms::others_write)) != fs::perms::none) {
    return Missing(env, "is writable by group or others");
  }
  switch (env.language) {
    case Language::kPython:
      if (!fs::is_regular_file(root / "pyvenv.cfg", ec)) {
        return Missing(env, "has no pyvenv.cfg (make it with scripts/python-runtime)");
      }
      if (!os::IsExecutable((root / "bin" / "python3").string())) {
        return Missing(env, "has no executable bin/python3");
      }
      return absl::OkStatus();
    case Language::kJavaScript:
    case Language::kTypeScript:
      if (!IsDirectory(root / "node_modules")) return Missing(env, "has no node_modules/");
      return absl::OkStatus();
    case Language::kBash:
      if (!IsDirectory(root / "bin")) return Missing(env, "has no bin/");
      return absl::OkStatus();
  }
  return absl::OkStatus();
}

absl::Status CheckRuntimes(const std::vector<RuntimeEnv>& runtimes) {
  for (size_t i = 0; i < runtimes.size(); ++i) {
    if (absl::Status st = ValidateRuntimeName(runtimes[i].name); !st.ok()) return st;
    for (size_t j = 0; j < i; ++j) {
      if (runtimes[j].name == runtimes[i].name) {
        return absl::InvalidArgumentError(
            absl::StrCat("runtime \"", runtimes[i].name, "\" is declared twice"));
      }
    }
    if (absl::Status st = CheckRuntimeRoot(runtimes[i]); !st.ok()) return st;
  }
  return absl::OkStatus();
}

absl::StatusOr<const RuntimeEnv*> ResolveRuntime(const std::vector<RuntimeEnv>& runtimes,
                                                 Language language, std::string_view name) {
  if (name.empty()) return nullptr;
  for (const RuntimeEnv& env : runtimes) {
    if (env.name != name) continue;
    if (env.language != language) {
      return base::ApiError(absl::StatusCode::kInvalidArgument, "RUNTIME_LANGUAGE_MISMATCH",
                            absl::StrCat("runtime \"", env.name, "\" is for ",
                                         std::string(LanguageName(env.language)), ", not ",
                                         std::string(LanguageName(language))));
    }
    return &env;
  }
  // Never echoed: the caller's value is not repeated back.
  return base::ApiError(absl::StatusCode::kInvalidArgument, "UNKNOWN_RUNTIME",
                        "field 'runtime' names no runtime this service declares (its readiness "
                        "lists them)");
}

std::vector<AlternativeLink> LibraryAlternatives() {
  std::vector<AlternativeLink> links;
  std::error_code ec;
  for (fs::directory_iterator it("/etc/alternatives", ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!absl::StrContains(name, ".so") || !it->is_symlink(ec)) continue;
    const std::string target = fs::read_symlink(it->path(), ec).string();
    if (ec || !absl::StartsWith(target, "/usr/") || absl::StrContains(target, "/../")) continue;
    links.push_back({it->path().string(), target});
  }
  std::sort(links.begin(), links.end(),
            [](const AlternativeLink& a, const AlternativeLink& b) { return a.path < b.path; });
  return links;
}

std::vector<std::string> HiddenLibraryDirs() {
  std::vector<std::string> dirs;
  for (const char* lib : {"/usr/lib", "/usr/local/lib"}) {
    std::error_code ec;
    std::vector<fs::path> pythons;
    // Symlinked entries are skipped: a mount through one could land outside
    // the sandbox's root.
    for (fs::directory_iterator it(lib, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (absl::StartsWith(name, "python3") && !it->is_symlink(ec) && it->is_directory(ec)) {
        pythons.push_back(it->path());
      }
    }
    std::sort(pythons.begin(), pythons.end());
    for (const fs::path& python : pythons) {
      for (const char* sub : {"dist-packages", "site-packages"}) {
        const fs::path dir = python / sub;
        if (IsDirectory(dir) && !fs::is_symlink(dir, ec)) dirs.push_back(dir.string());
      }
    }
  }
  return dirs;
}

}  // namespace aevatar::sandbox
