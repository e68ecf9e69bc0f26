#include "runtime_roots.h"

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>

namespace aevatar::testing {
namespace {

namespace fs = std::filesystem;

// The system interpreter's stdlib directory name, e.g. "python3.11".
std::string SystemPythonDir() {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/usr/lib", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("python3.", 0) == 0 && fs::exists(entry.path() / "os.py", ec)) return name;
  }
  return "python3";
}

void WriteFile(const fs::path& path, const std::string& text, fs::perms mode) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
  fs::permissions(path, mode);
}

}  // namespace

std::string PythonDataRootProblem() {
  const sandbox::RuntimeEnv env{"python-data", sandbox::Language::kPython, kPythonDataRoot};
  const absl::Status st = sandbox::CheckRuntimeRoot(env);
  if (st.ok() && fs::exists(fs::path(kPythonDataRoot) / "lib" / SystemPythonDir() /
                            "site-packages" / "pandas")) {
    return "";
  }
  return std::string(st.ok() ? "it holds no pandas" : st.message()) +
         "; prepare it with scripts/setup (scripts/python-runtime " + kPythonDataRoot +
         " python3-numpy python3-pandas)";
}

TestRuntimeRoot::TestRuntimeRoot(const std::string& name, sandbox::Language language) {
  static std::atomic<int> counter{0};
  const fs::path dir =
      fs::read_symlink("/proc/self/exe").parent_path() /
      ("test-runtime-" + std::to_string(getpid()) + "-" + std::to_string(counter++) + "-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto file = fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                    fs::perms::others_read;
  const auto exec = file | fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec;
  switch (language) {
    case sandbox::Language::kPython:
      WriteFile(dir / "pyvenv.cfg", "home = /usr/bin\ninclude-system-site-packages = false\n",
                file);
      fs::create_directories(dir / "bin");
      fs::create_symlink("/usr/bin/python3", dir / "bin" / "python3");
      WriteFile(dir / "lib" / SystemPythonDir() / "site-packages" / "aevatar_probe.py",
                std::string("def hello():\n    print('") + kProbeText + "')\n", file);
      break;
    case sandbox::Language::kJavaScript:
    case sandbox::Language::kTypeScript:
      WriteFile(dir / "node_modules" / "aevatar-probe" / "index.js",
                std::string("exports.hello = () => console.log('") + kProbeText + "');\n", file);
      break;
    case sandbox::Language::kBash:
      WriteFile(dir / "bin" / "aevatar-probe",
                std::string("#!/bin/bash\necho '") + kProbeText + "'\n", exec);
      break;
  }
  // Every directory 0755: group/others may not write (CheckRuntimeRoot).
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_directory() && !entry.is_symlink()) fs::permissions(entry.path(), exec);
  }
  fs::permissions(dir, exec);
  env_ = {name, language, dir.string()};
}

TestRuntimeRoot::~TestRuntimeRoot() {
  std::error_code ec;
  fs::remove_all(env_.root, ec);
}

std::string TestRuntimeRoot::Flag() const {
  return env_.name + "=" + std::string(sandbox::LanguageName(env_.language)) + ":" + env_.root;
}

}  // namespace aevatar::testing
