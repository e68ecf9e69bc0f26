// Hostile programs that try to act on processes outside their run or to
// outlive it: kill -9 -1, signalling host pids, daemonising past the end of
// the run, stopping themselves, and gaining root through setuid binaries.
#include <grp.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "security_fixture.h"

namespace aevatar::security_test {
namespace {

using ProcessEscape = SecurityTest;

// A host process running as the sandbox's own uid (65534), so only the pid
// namespace, not a uid check, stands between it and a hostile kill.
class HostSleeper {
 public:
  explicit HostSleeper(const std::string& argv0) {
    pid_ = ::fork();
    if (pid_ == 0) {
      if (::setgroups(0, nullptr) != 0 || ::setresgid(65534, 65534, 65534) != 0 ||
          ::setresuid(65534, 65534, 65534) != 0) {
        ::_exit(126);
      }
      ::execl("/bin/sleep", argv0.c_str(), "60", static_cast<char*>(nullptr));
      ::_exit(127);
    }
  }
  ~HostSleeper() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  pid_t pid() const { return pid_; }
  // True while the process has not exited (it is not reaped here).
  bool Alive() const {
    siginfo_t info{};
    return ::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
           info.si_pid == 0;
  }

 private:
  pid_t pid_ = -1;
};

TEST_F(ProcessEscape, KillMinusOneDoesNotReachHostProcesses) {
  const std::string marker = UniqueMarker("host-sleeper");
  HostSleeper sleeper(marker);
  ASSERT_GT(sleeper.pid(), 0);
  ASSERT_TRUE(sleeper.Alive());
  const std::string host_pids = std::to_string(sleeper.pid()) + ", " + std::to_string(::getpid()) +
                                ", " + std::to_string(::getppid());
  // Each program starts a sibling inside the sandbox (which kill -1 must
  // reach: the call works, only its reach is bounded), then tries host pids.
  const std::vector<Program> programs = {
      {Language::kBash,
       "sleep 30 &\n"
       "kill -9 -1; wait $!; echo \"sibling $?\"\n"
       "for p in " +
           host_pids +
           "; do kill -9 ${p%,} 2>/dev/null || echo \"host ${p%,} ESRCH\"; "
           "done\n"
           "cat /proc/[0-9]*/cmdline | tr '\\0' ' '; echo\n"},
      {Language::kPython,
       "import errno, os, signal, subprocess\n"
       "child = subprocess.Popen(['sleep', '30'])\n"
       "os.kill(-1, signal.SIGKILL)\n"
       "rc = child.wait()\n"
       "print('sibling', 128 - rc if rc < 0 else rc)\n"
       "for p in [" +
           host_pids +
           "]:\n"
           "    try:\n"
           "        os.kill(p, signal.SIGKILL)\n"
           "        print('host', p, 'KILLED')\n"
           "    except OSError as e:\n"
           "        print('host', p, errno.errorcode[e.errno])\n"
           "for p in os.listdir('/proc'):\n"
           "    if p.isdigit():\n"
           "        print(open('/proc/%s/cmdline' % p).read().replace('\\0', ' '))\n"},
      {Language::kJavaScript,
       "const { spawn } = require('child_process');\n"
       "const child = spawn('sleep', ['30']);\n"
       "child.on('exit', (code, sig) => {\n"
       "  console.log('sibling', sig === 'SIGKILL' ? 137 : code);\n"
       "  for (const p of [" +
           host_pids +
           "]) {\n"
           "    try { process.kill(p, 'SIGKILL'); console.log('host', p, 'KILLED'); }\n"
           "    catch (e) { console.log('host', p, e.code); }\n"
           "  }\n"
           "});\n"
           "child.on('spawn', () => { try { process.kill(-1, 'SIGKILL'); } catch (e) {} });\n"},
  };
  for (const Program& program : programs) {
    SCOPED_TRACE(sandbox::LanguageName(program.language));
    RunResult r = Run(program);
    EXPECT_EQ(r.verdict, Verdict::kOk) << Describe(r);
    EXPECT_NE(r.stdout_data.find("sibling 137"), std::string::npos) << Describe(r);
    EXPECT_NE(r.stdout_data.find("host " + std::to_string(sleeper.pid()) + " ESRCH"),
              std::string::npos)
        << Describe(r);
    EXPECT_EQ(r.stdout_data.find("KILLED"), std::string::npos) << Describe(r);
    EXPECT_EQ(r.stdout_data.find(marker), std::string::npos) << "host process visible";
    EXPECT_TRUE(sleeper.Alive()) << "the host sleeper was killed from the sandbox";
  }
}

TEST_F(ProcessEscape, DaemonisedGrandchildIsGoneAfterTheRun) {
  const std::string marker = UniqueMarker("daemon");
  // Each program double-forks a session leader that sleeps past any deadline
  // under a recognisable argv[0] and keeps the run's stdout open, confirms it
  // is running, then exits 0.
  const std::string confirm_py =
      "import os, time\n"
      "def running():\n"
      "    for p in os.listdir('/proc'):\n"
      "        try:\n"
      "            if p.isdigit() and open('/proc/%s/cmdline' % p).read().startswith('" +
      marker +
      "'):\n"
      "                return True\n"
      "        except OSError:\n"
      "            pass\n"
      "    return False\n"
      "for _ in range(400):  # up to 8 s for the daemon to appear on a busy machine\n"
      "    if running(): break\n"
      "    time.sleep(0.02)\n"
      "print('daemon running', running(), flush=True)\n";
  const std::vector<Program> programs = {
      {Language::kPython,
       "import os\n"
       "if os.fork() == 0:\n"
       "    os.setsid()\n"
       "    if os.fork() == 0:\n"
       "        os.execv('/bin/sleep', ['" +
           marker +
           "', '60'])\n"
           "    os._exit(0)\n"
           "os.wait()\n" +
           confirm_py},
      {Language::kJavaScript,
       "const fs = require('fs');\n"
       "require('child_process').spawn('/bin/sleep', ['60'],\n"
       "    { detached: true, stdio: 'inherit', argv0: '" +
           marker +
           "' }).unref();\n"
           "const running = () => fs.readdirSync('/proc').some((p) => {\n"
           "  try { return /^\\d+$/.test(p) &&\n"
           "          fs.readFileSync(`/proc/${p}/cmdline`, 'latin1').startsWith('" +
           marker +
           "'); }\n"
           "  catch (e) { return false; }\n"
           "});\n"
           "const nap = new Int32Array(new SharedArrayBuffer(4));\n"
           "for (let i = 0; i < 400 && !running(); i++) Atomics.wait(nap, 0, 0, 20);\n"
           "console.log('daemon running', running() ? 'True' : 'False');\n"},
      {Language::kBash, "( setsid bash -c 'exec -a " + marker +
                            " sleep 60' & )\n"
                            "python3 - <<'EOF'\n" +
                            confirm_py + "EOF\n"},
  };
  for (const Program& program : programs) {
    SCOPED_TRACE(sandbox::LanguageName(program.language));
    RunResult r = Run(program);
    // The run ends when its program does, although the daemon holds stdout.
    EXPECT_EQ(r.verdict, Verdict::kOk) << Describe(r);
    EXPECT_EQ(r.stdout_data, "daemon running True\n") << Describe(r);
    EXPECT_EQ(HostProcessesMatching(marker), std::vector<std::string>{});
  }
}

TEST_F(ProcessEscape, SigstopOfItselfEndsAtTheWallDeadline) {
  const std::vector<Program> programs = {
      {Language::kPython, "import os, signal\nos.kill(os.getpid(), signal.SIGSTOP)\nprint('up')\n"},
      {Language::kJavaScript, "process.kill(process.pid, 'SIGSTOP');\nconsole.log('up');\n"},
      {Language::kBash, "kill -STOP $$\necho up\n"},
  };
  Limits limits = QuickLimits();
  limits.wall_timeout_secs = 2;
  for (const Program& program : programs) {
    SCOPED_TRACE(sandbox::LanguageName(program.language));
    RunResult r = Run(program, limits);
    EXPECT_EQ(r.verdict, Verdict::kWallTimeout) << Describe(r);
    EXPECT_EQ(r.stdout_data, "") << Describe(r);
  }
}

TEST_F(ProcessEscape, SetuidBinariesDoNotGrantRoot) {
  // Watches each setuid-root binary's credentials while it runs (a zombie
  // keeps them readable too): with nosuid /usr and no_new_privs the effective
  // uid must stay 65534. On a plain host this probe sees euid 0.
  std::string binaries;
  int present = 0;
  for (const char* path :
       {"/usr/bin/su", "/usr/bin/passwd", "/usr/bin/newgrp", "/usr/bin/chsh", "/usr/bin/chfn",
        "/usr/bin/gpasswd", "/usr/bin/mount", "/usr/bin/sudo"}) {
    std::error_code ec;
    const auto perms = std::filesystem::status(path, ec).permissions();
    if (ec || (perms & std::filesystem::perms::set_uid) == std::filesystem::perms::none) continue;
    binaries += "'" + std::string(path) + "', ";
    ++present;
  }
  ASSERT_GT(present, 0) << "no setuid binaries on this host to try";
  RunResult r = Run({Language::kPython,
                     "import os, subprocess, time\n"
                     "for b in [" +
                         binaries +
                         "]:\n"
                         "    r, w = os.pipe()\n"
                         "    p = subprocess.Popen([b], stdin=r, stdout=subprocess.DEVNULL,\n"
                         "                         stderr=subprocess.DEVNULL)\n"
                         "    seen = set()\n"
                         "    deadline = time.time() + 0.3\n"
                         "    while True:\n"
                         "        for line in open('/proc/%d/status' % p.pid):\n"
                         "            if line.startswith('Uid:'):\n"
                         "                seen.add(' '.join(line.split()[1:]))\n"
                         "        if p.poll() is not None or time.time() > deadline:\n"
                         "            break\n"
                         "    p.kill(); p.wait(); os.close(r); os.close(w)\n"
                         "    print(b, sorted(seen))\n"
                         "print('uid', os.getuid(), os.geteuid())\n"});
  EXPECT_EQ(r.verdict, Verdict::kOk) << Describe(r);
  int lines = 0;
  for (size_t at = 0;
       (at = r.stdout_data.find(" ['65534 65534 65534 65534']\n", at)) != std::string::npos; ++at) {
    ++lines;
  }
  EXPECT_EQ(lines, present) << Describe(r);
  EXPECT_NE(r.stdout_data.find("uid 65534 65534\n"), std::string::npos) << Describe(r);

  RunResult su = Run({Language::kBash,
                      "echo \"su:$(su -c 'id -u' root </dev/null 2>/dev/null)\"\n"
                      "echo \"id:$(id -u)\"\n"});
  EXPECT_EQ(su.stdout_data, "su:\nid:65534\n") << Describe(su);
}

}  // namespace
}  // namespace aevatar::security_test
