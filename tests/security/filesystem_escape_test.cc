// Hostile programs that try to write to the sandbox's read-only system paths
// or to reach the host's files: directly, through /proc, and through symlinks
// planted in /workspace. Each check names a file that exists on the host and
// asserts both that the program could not read or create it and that none of
// its contents reached the output.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "security_fixture.h"

namespace aevatar::security_test {
namespace {

namespace fs = std::filesystem;

using FilesystemEscape = SecurityTest;

// The project's root on the host, found from this test binary's location
// (<root>/<build dir>/bin/security_test).
fs::path ProjectRoot() {
  fs::path dir = fs::read_symlink("/proc/self/exe").parent_path();
  while (!dir.empty() && dir != dir.root_path()) {
    if (fs::exists(dir / "CMakeLists.txt") && fs::exists(dir / "src" / "sandbox")) return dir;
    dir = dir.parent_path();
  }
  return {};
}

// First line of a host file: a string the sandbox must never print.
std::string FirstLine(const std::string& path) {
  std::string text = ReadHostFile(path);
  return text.substr(0, text.find('\n'));
}

// Python: tries to create `name` in each directory and prints "<dir> <errno>"
// (or "<dir> CREATED").
std::string PythonWriteProbe(const std::vector<std::string>& dirs, const std::string& name) {
  std::string list;
  for (const auto& dir : dirs) list += "'" + dir + "', ";
  return "import errno, os\n"
         "for d in [" +
         list +
         "]:\n"
         "    try:\n"
         "        with open(os.path.join(d, '" +
         name +
         "'), 'w') as f:\n"
         "            f.write('escaped')\n"
         "        print(d, 'CREATED')\n"
         "    except OSError as e:\n"
         "        print(d, errno.errorcode[e.errno])\n";
}

TEST_F(FilesystemEscape, WritesToRootUsrAndEtcFail) {
  const std::string name = UniqueMarker("write");
  const std::vector<std::string> dirs = {"/",    "/usr", "/usr/bin", "/usr/lib",
                                         "/etc", "/bin", "/proc",    "/dev"};
  std::string js_dirs, bash_dirs;
  for (const auto& dir : dirs) {
    js_dirs += "'" + dir + "', ";
    bash_dirs += dir + " ";
  }
  const std::vector<Program> programs = {
      {Language::kPython, PythonWriteProbe(dirs, name)},
      {Language::kJavaScript,
       "const fs = require('fs'), path = require('path');\n"
       "for (const d of [" +
           js_dirs +
           "]) {\n"
           "  try { fs.writeFileSync(path.join(d, '" +
           name +
           "'), 'escaped'); console.log(d, 'CREATED'); }\n"
           "  catch (e) { console.log(d, e.code); }\n"
           "}\n"},
      {Language::kBash,
       "for d in " + bash_dirs +
           "; do\n"
           "  if (echo escaped > \"$d/" +
           name +
           "\") 2>/dev/null; then echo \"$d CREATED\";\n"
           "  else echo \"$d DENIED\"; fi\n"
           "done\n"
           "echo 'root:x:0:0::/:/bin/bash' >> /etc/passwd 2>/dev/null && echo 'passwd CREATED'\n"
           "true\n"},
  };
  for (const Program& program : programs) {
    SCOPED_TRACE(sandbox::LanguageName(program.language));
    RunResult r = Run(program);
    EXPECT_EQ(r.verdict, Verdict::kOk) << Describe(r);
    EXPECT_EQ(r.stdout_data.find("CREATED"), std::string::npos) << Describe(r);
    for (const auto& dir : dirs) {
      // Every directory was tried and refused: read-only or not ours (proc
      // cannot hold new files at all).
      const size_t at = r.stdout_data.find(dir + " ");
      ASSERT_NE(at, std::string::npos) << dir << "\n" << Describe(r);
      const std::string outcome = r.stdout_data.substr(at + dir.size() + 1, 6);
      EXPECT_TRUE(outcome.rfind("EROFS", 0) == 0 || outcome.rfind("EACCES", 0) == 0 ||
                  outcome.rfind("EPERM", 0) == 0 || outcome.rfind("DENIED", 0) == 0 ||
                  (dir == "/proc" && outcome.rfind("ENOENT", 0) == 0))
          << dir << ": " << outcome;
      EXPECT_FALSE(fs::exists(fs::path(dir) / name)) << "created on the host: " << dir;
    }
  }
}

TEST_F(FilesystemEscape, HostSecretFilesCannotBeRead) {
  const fs::path root = ProjectRoot();
  ASSERT_FALSE(root.empty()) << "cannot find the project root from the test binary";
  const std::string project_file = (root / "CMakeLists.txt").string();
  const std::string test_binary = fs::read_symlink("/proc/self/exe").string();
  // A canary on the host's /tmp: the very directory the run's root is mounted on.
  const std::string canary_path = "/tmp/" + UniqueMarker("canary");
  const std::string canary = UniqueMarker("secret-content");
  { std::ofstream(canary_path) << canary << "\n"; }
  struct RemoveAtEnd {
    ~RemoveAtEnd() {
      std::error_code ec;
      fs::remove(path, ec);
    }
    std::string path;
  } remove_canary{canary_path};
  ASSERT_EQ(ReadHostFile(canary_path), canary + "\n");

  const std::vector<std::string> paths = {"/etc/shadow",
                                          "/etc/gshadow",
                                          "/root",
                                          "/root/.bash_history",
                                          project_file,
                                          test_binary,
                                          canary_path,
                                          "/proc/1/environ",
                                          "/proc/1/root/etc/shadow",
                                          "/proc/1/cwd/CMakeLists.txt"};
  std::string py_list, js_list, bash_list;
  for (const auto& path : paths) {
    py_list += "'" + path + "', ";
    js_list += "'" + path + "', ";
    bash_list += "'" + path + "' ";
  }
  const std::vector<Program> programs = {
      {Language::kPython,
       "import errno, os\n"
       "for p in [" +
           py_list +
           "]:\n"
           "    try:\n"
           "        if os.path.isdir(p):\n"
           "            print(p, 'LISTED', os.listdir(p))\n"
           "        else:\n"
           "            with open(p, 'rb') as f:\n"
           "                print(p, 'READ', f.read(4096))\n"
           "    except OSError as e:\n"
           "        print(p, errno.errorcode[e.errno])\n"},
      {Language::kJavaScript,
       "const fs = require('fs');\n"
       "for (const p of [" +
           js_list +
           "]) {\n"
           "  try { console.log(p, 'READ', fs.readFileSync(p).toString('latin1').slice(0, 4096)); "
           "}\n"
           "  catch (e) {\n"
           "    if (e.code === 'EISDIR') console.log(p, 'LISTED', fs.readdirSync(p));\n"
           "    else console.log(p, e.code);\n"
           "  }\n"
           "}\n"},
      {Language::kBash,
       "for p in " + bash_list +
           "; do\n"
           "  if [ -d \"$p\" ] && ls -A \"$p\" >/dev/null 2>&1; then echo \"$p LISTED $(ls -A "
           "\"$p\")\";\n"
           "  elif c=$(head -c 4096 \"$p\" 2>/dev/null); then echo \"$p READ $c\";\n"
           "  else echo \"$p DENIED\"; fi\n"
           "done\n"},
  };
  for (const Program& program : programs) {
    SCOPED_TRACE(sandbox::LanguageName(program.language));
    RunResult r = Run(program);
    EXPECT_EQ(r.verdict, Verdict::kOk) << Describe(r);
    const std::string output = r.stdout_data + r.stderr_data;
    for (const auto& path : paths) {
      EXPECT_NE(r.stdout_data.find(path + " "), std::string::npos) << path << " not tried";
      EXPECT_EQ(r.stdout_data.find(path + " READ"), std::string::npos) << Describe(r);
      EXPECT_EQ(r.stdout_data.find(path + " LISTED"), std::string::npos) << Describe(r);
    }
    EXPECT_EQ(output.find(canary), std::string::npos) << Describe(r);
    EXPECT_EQ(output.find(FirstLine("/etc/shadow")), std::string::npos);
    EXPECT_EQ(output.find(FirstLine(project_file)), std::string::npos);
  }
}

TEST_F(FilesystemEscape, SymlinksInWorkspaceDoNotReachHostFiles) {
  ASSERT_FALSE(ProjectRoot().empty()) << "cannot find the project root from the test binary";
  const std::string project_file = (ProjectRoot() / "CMakeLists.txt").string();
  // Each link is created in /workspace, then read through; the outcome must
  // be a sandbox file or an error, never the host's file.
  const std::vector<std::pair<std::string, std::string>> links = {
      {"shadow", "/etc/shadow"}, {"initroot", "/proc/1/root"},    {"up", "../../../../.."},
      {"project", project_file}, {"selfroot", "/proc/self/root"},
  };
  std::string script = "cd /workspace\n";
  for (const auto& [name, target] : links) script += "ln -s '" + target + "' " + name + "\n";
  script +=
      "for p in shadow initroot/etc/shadow initroot/etc/passwd up/etc/shadow up/etc/passwd "
      "project selfroot/etc/passwd up/root; do\n"
      "  if c=$(cat \"$p\" 2>/dev/null); then echo \"== $p READ\"; echo \"$c\";\n"
      "  else echo \"== $p DENIED\"; fi\n"
      "done\n"
      "readlink -f up\n";
  const std::vector<Program> programs = {
      {Language::kBash, script},
      {Language::kPython,
       "import os\n"
       "os.chdir('/workspace')\n"
       "os.symlink('/etc/shadow', 'py-shadow')\n"
       "os.symlink('/proc/1/root', 'py-initroot')\n"
       "os.symlink('../../../..', 'py-up')\n"
       "for p in ['py-shadow', 'py-initroot/etc/shadow', 'py-up/etc/shadow', 'py-up/etc/passwd']:\n"
       "    try:\n"
       "        print('==', p, 'READ'); print(open(p).read())\n"
       "    except OSError as e:\n"
       "        print('==', p, 'DENIED', e.errno)\n"
       "print(os.path.realpath('py-up'))\n"},
  };
  const std::string host_shadow_root = FirstLine("/etc/shadow");
  const std::string host_passwd = ReadHostFile("/etc/passwd");
  // A host account the generated /etc/passwd does not have.
  const std::string host_only_user = host_passwd.substr(host_passwd.find("\ndaemon:") + 1, 12);
  ASSERT_EQ(host_only_user.rfind("daemon:", 0), 0u) << "expected a daemon user on the host";
  for (const Program& program : programs) {
    SCOPED_TRACE(sandbox::LanguageName(program.language));
    RunResult r = Run(program);
    EXPECT_EQ(r.verdict, Verdict::kOk) << Describe(r);
    const std::string& out = r.stdout_data;
    EXPECT_EQ(out.find(host_shadow_root), std::string::npos) << Describe(r);
    EXPECT_EQ(out.find(host_only_user), std::string::npos) << Describe(r);
    EXPECT_EQ(out.find(FirstLine(project_file)), std::string::npos) << Describe(r);
    // "../../.." resolved to the sandbox root and found the generated passwd.
    EXPECT_NE(out.find("sandbox:x:65534:65534"), std::string::npos) << Describe(r);
    EXPECT_NE(out.find("shadow DENIED"), std::string::npos) << Describe(r);
    EXPECT_NE(out.find("\n/\n"), std::string::npos) << Describe(r);
  }
}

TEST_F(FilesystemEscape, HardLinkingHostBinariesIntoWorkspaceFails) {
  RunResult r = Run({Language::kPython,
                     "import errno, os\n"
                     "for src in ['/usr/bin/su', '/usr/bin/python3', '/etc/passwd']:\n"
                     "    try:\n"
                     "        os.link(src, '/workspace/' + os.path.basename(src))\n"
                     "        print(src, 'LINKED')\n"
                     "    except OSError as e:\n"
                     "        print(src, errno.errorcode[e.errno])\n"});
  EXPECT_EQ(r.stdout_data, "/usr/bin/su EXDEV\n/usr/bin/python3 EXDEV\n/etc/passwd EXDEV\n")
      << Describe(r);
}

}  // namespace
}  // namespace aevatar::security_test
