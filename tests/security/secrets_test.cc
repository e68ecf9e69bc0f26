// Hostile programs hunting for the service's secrets: its environment (both a
// variable set at run time and the block the process started with), its
// command line, its memory through /proc/1 (the sandbox init is a copy of the
// service), and another tenant's run happening at the same time.
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "security_fixture.h"
#include "testing/poll.h"

namespace aevatar::security_test {
namespace {

using Secrets = SecurityTest;

// Programs that print everything they can find about processes: their own
// environment, then the environ and cmdline of every /proc entry (or why not).
const std::vector<Program>& ProcessDumpers() {
  static const std::vector<Program> programs = {
      {Language::kPython,
       "import errno, os\n"
       "print('ENV', dict(os.environ))\n"
       "for pid in sorted(p for p in os.listdir('/proc') if p.isdigit()):\n"
       "    for f in ['environ', 'cmdline', 'status', 'maps', 'mem']:\n"
       "        path = '/proc/%s/%s' % (pid, f)\n"
       "        try:\n"
       "            with open(path, 'rb') as fh:\n"
       "                print(path, 'READ', fh.read(65536))\n"
       "        except OSError as e:\n"
       "            print(path, errno.errorcode[e.errno])\n"
       "for path in ['/proc/1/environ', '/proc/1/cmdline']:\n"
       "    try:\n"
       "        print(path, 'READ', open(path, 'rb').read())\n"
       "    except OSError as e:\n"
       "        print(path, errno.errorcode[e.errno])\n"},
      {Language::kJavaScript,
       "const fs = require('fs');\n"
       "console.log('ENV', JSON.stringify(process.env));\n"
       "const pids = fs.readdirSync('/proc').filter((p) => /^\\d+$/.test(p));\n"
       "for (const pid of new Set([...pids, '1'])) {\n"
       "  for (const f of ['environ', 'cmdline', 'status', 'maps']) {\n"
       "    const path = `/proc/${pid}/${f}`;\n"
       "    try { console.log(path, 'READ', fs.readFileSync(path).toString('latin1')); }\n"
       "    catch (e) { console.log(path, e.code); }\n"
       "  }\n"
       "}\n"},
      {Language::kBash,
       "echo ENV; env\n"
       "for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline /proc/1/environ /proc/1/cmdline; do\n"
       "  if c=$(tr '\\0' ' ' < \"$f\" 2>/dev/null); then echo \"$f READ $c\";\n"
       "  else echo \"$f DENIED\"; fi\n"
       "done\n"},
  };
  return programs;
}

// NAME=VALUE entries of the environment this process started with (and of
// the host's pid 1, when even root may read it), minus the few the sandbox
// sets to the same value on its own.
std::vector<std::string> StartupEnvironment() {
  std::vector<std::string> entries;
  const std::string block =
      ReadHostFile("/proc/self/environ") + '\0' + ReadHostFile("/proc/1/environ");
  for (const std::string& entry :
       std::vector<std::string>(absl::StrSplit(block, '\0', absl::SkipEmpty()))) {
    const std::string name = entry.substr(0, entry.find('='));
    if (name == "PATH" || name == "HOME" || name == "TMPDIR" || name == "LANG" || name == "USER" ||
        name == "SHLVL" || name == "_" || name == "PWD" || name == "OLDPWD") {
      continue;
    }
    if (entry.size() > name.size() + 3) entries.push_back(entry);
  }
  return entries;
}

TEST_F(Secrets, ServiceEnvironmentDoesNotReachTheProgram) {
  // A secret set at run time (the heap environ) and the ones the process
  // started with (the block /proc/<pid>/environ shows).
  const std::string canary = UniqueMarker("env-canary");
  ASSERT_EQ(::setenv("AEVATAR_SECURITY_CANARY", canary.c_str(), 1), 0);
  const std::vector<std::string> startup = StartupEnvironment();
  ASSERT_FALSE(startup.empty()) << "run this test with some environment to look for";
  for (const Program& program : ProcessDumpers()) {
    SCOPED_TRACE(sandbox::LanguageName(program.language));
    RunResult r = Run(program);
    EXPECT_EQ(r.verdict, Verdict::kOk) << Describe(r);
    const std::string output = r.stdout_data + r.stderr_data;
    ASSERT_NE(output.find("ENV"), std::string::npos) << Describe(r);
    EXPECT_EQ(output.find(canary), std::string::npos) << Describe(r);
    for (const std::string& entry : startup) {
      EXPECT_EQ(output.find(entry), std::string::npos) << "leaked " << entry;
    }
    EXPECT_EQ(output.find("/proc/1/environ READ"), std::string::npos) << Describe(r);
  }
  ::unsetenv("AEVATAR_SECURITY_CANARY");
}

TEST_F(Secrets, ServiceCommandLineIsNotVisibleFromTheSandbox) {
  // The sandbox init is forked from the service without an execve, so its
  // /proc/<pid>/cmdline is the service's: that may carry flags and paths.
  std::string cmdline = ReadHostFile("/proc/self/cmdline");
  const std::string argv0 = cmdline.substr(0, cmdline.find('\0'));
  ASSERT_FALSE(argv0.empty());
  for (const Program& program : ProcessDumpers()) {
    SCOPED_TRACE(sandbox::LanguageName(program.language));
    RunResult r = Run(program);
    EXPECT_EQ(r.verdict, Verdict::kOk) << Describe(r);
    const std::string output = r.stdout_data + r.stderr_data;
    EXPECT_EQ(output.find(argv0), std::string::npos)
        << "the service's argv[0] " << argv0 << " is visible\n"
        << Describe(r);
    EXPECT_EQ(output.find("/proc/1/cmdline READ"), std::string::npos) << Describe(r);
  }
}

TEST_F(Secrets, ServiceMemoryIsNotReadableThroughTheInit) {
  // The init shares the service's memory image (copy-on-write): its heap
  // holds whatever the service held at clone time.
  RunResult r = Run({Language::kPython,
                     "import ctypes, errno, os\n"
                     "for f in ['mem', 'maps', 'environ', 'root/', 'cwd/', 'fd/']:\n"
                     "    p = '/proc/1/' + f\n"
                     "    try:\n"
                     "        print(p, 'OPENED', os.listdir(p) if f.endswith('/') else"
                     " open(p, 'rb').read(64))\n"
                     "    except OSError as e:\n"
                     "        print(p, errno.errorcode[e.errno])\n"
                     "libc = ctypes.CDLL(None, use_errno=True)\n"
                     "buf = ctypes.create_string_buffer(64)\n"
                     "local = (ctypes.c_void_p * 2)(ctypes.addressof(buf), 64)\n"
                     "remote = (ctypes.c_void_p * 2)(0x400000, 64)\n"
                     "r = libc.process_vm_readv(1, local, 1, remote, 1, 0)\n"
                     "print('process_vm_readv', r, errno.errorcode[ctypes.get_errno()])\n"});
  EXPECT_EQ(r.verdict, Verdict::kOk) << Describe(r);
  EXPECT_EQ(r.stdout_data.find("OPENED"), std::string::npos) << Describe(r);
  EXPECT_NE(r.stdout_data.find("process_vm_readv -1 EPERM"), std::string::npos) << Describe(r);
}

// Sends `signal` to every host process whose command line holds `needle`.
void SignalHostProcesses(const std::string& needle, int signal) {
  for (const std::string& line : HostProcessesMatching(needle)) {
    ::kill(std::atoi(line.c_str()), signal);  // each line is "pid: cmdline"
  }
}

TEST_F(Secrets, ConcurrentRunCannotSeeAnotherRunsSecrets) {
  // Tenant A holds a server-granted key in its environment and files, and
  // sleeps until the test ends it; tenant B, running meanwhile, looks
  // everywhere for it.
  const std::string secret = UniqueMarker("tenant-a-key");
  const std::string holder = "holder-" + secret;
  sandbox::RunSpec a;
  a.language = Language::kBash;
  a.source =
      "echo \"$NYXID_API_KEY\" > /tmp/key; echo \"$NYXID_API_KEY\" > /workspace/key\n"
      "echo \"$NYXID_API_KEY\" > /dev/shm/key\n"
      "exec -a \"holder-$NYXID_API_KEY\" sleep 600\n";
  a.server_env = {{"NYXID_API_KEY", secret}};
  a.limits = QuickLimits();
  a.limits.wall_timeout_secs = 120;  // a hang guard: the test ends A itself
  RunResult a_result;
  std::thread tenant_a([&] { a_result = RunWithSpec(a); });
  // A has written its files once it has exec'd the holder.
  const bool a_holding =
      aevatar::testing::PollUntil([&] { return !HostProcessesMatching(holder).empty(); });
  EXPECT_TRUE(a_holding) << "tenant A never started holding its key";

  const std::string hunt =
      "cat /tmp/key /workspace/key /dev/shm/key 2>&1\n"
      "ls -la /tmp /workspace /dev/shm\n"
      "for f in /proc/[0-9]*/cmdline /proc/[0-9]*/environ; do tr '\\0' ' ' < $f; echo; done\n"
      "echo processes: $(ls -d /proc/[0-9]* | wc -l)\n";
  RunResult b = Run({Language::kBash, hunt});
  // A was still holding the key when B's hunt ended, so the hunt ran while
  // the secret existed: it found nothing because it cannot, not because it
  // came too late.
  EXPECT_FALSE(HostProcessesMatching(holder).empty()) << "tenant A ended before B's hunt did";
  SignalHostProcesses(holder, SIGTERM);
  tenant_a.join();
  EXPECT_EQ(a_result.verdict, Verdict::kSignaled) << Describe(a_result);
  EXPECT_EQ(a_result.signal, SIGTERM) << Describe(a_result);
  EXPECT_EQ(b.verdict, Verdict::kOk) << Describe(b);
  EXPECT_EQ((b.stdout_data + b.stderr_data).find(secret), std::string::npos) << Describe(b);
  EXPECT_NE(b.stdout_data.find("No such file"), std::string::npos) << Describe(b);
}

}  // namespace
}  // namespace aevatar::security_test
