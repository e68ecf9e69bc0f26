// The isolation, limits and hostile-program checks with a runtime
// environment mounted: the runtime's root is one more read-only bind, and
// nothing about it may give a program a way out, a privilege, or a way past
// a limit. Each run is also checked by the fixture to leave nothing on the
// host.
#include <filesystem>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "security_fixture.h"
#include "testing/runtime_roots.h"

namespace aevatar::security_test {
namespace {

namespace fs = std::filesystem;

using RuntimeMounted = SecurityTest;

TEST_F(RuntimeMounted, WritesIntoEveryRuntimeRootFailAndTheHostRootIsUnchanged) {
  // The same shell script, fed on stdin to a bash that each runtime's own
  // language starts (the runtime is mounted for every process of the run).
  const std::vector<Program> launchers = {
      {Language::kBash, "exec /bin/bash -s", "sec-sh"},
      {Language::kPython, "import subprocess\nsubprocess.run(['/bin/bash', '-s'])", "sec-py"},
      {Language::kJavaScript,
       "require('child_process').execFileSync('/bin/bash', ['-s'], {stdio: 'inherit'})", "sec-js"},
  };
  for (const Program& launcher : launchers) {
    SCOPED_TRACE(launcher.runtime);
    const std::string root = RuntimeRoot(launcher.runtime);
    ASSERT_FALSE(root.empty());
    const std::string marker = UniqueMarker("planted");
    const std::string dir = "/opt/runtimes/" + launcher.runtime;
    const std::string script = "for d in " + dir + " " + dir + "/bin " + dir + "/lib " + dir +
                               "/node_modules " +
                               "/opt/runtimes /opt /; do\n"
                               "  [ -d \"$d\" ] || continue\n"
                               "  if ( : > \"$d/" +
                               marker +
                               "\" ) 2>/dev/null; then echo \"$d CREATED\"; "
                               "else echo \"$d refused\"; fi\n"
                               "done\n"
                               "mkdir " +
                               dir + "/" + marker +
                               " 2>/dev/null && echo MKDIR\n"
                               "mv " +
                               dir +
                               "/* /tmp/ 2>/dev/null && echo MOVED\n"
                               "rm -rf " +
                               dir + "/* 2>/dev/null; ls " + dir + " | wc -l\n";
    RunResult r = Run(launcher, QuickLimits(), script);
    EXPECT_NE(r.stdout_data.find(dir + " refused"), std::string::npos) << Describe(r);
    EXPECT_EQ(r.stdout_data.find("CREATED"), std::string::npos) << Describe(r);
    EXPECT_EQ(r.stdout_data.find("MKDIR"), std::string::npos) << Describe(r);
    EXPECT_EQ(r.stdout_data.find("MOVED"), std::string::npos) << Describe(r);
    EXPECT_FALSE(fs::exists(fs::path(root) / marker));
    EXPECT_FALSE(fs::is_empty(root)) << "the host root lost its files";
  }
  // From inside a python runtime, with its own interpreter.
  const Program python_writer = {
      Language::kPython,
      "import errno\n"
      "try:\n"
      "    open('/opt/runtimes/sec-py/pyvenv.cfg', 'a').write('home = /tmp\\n')\n"
      "    print('APPENDED')\n"
      "except OSError as e:\n"
      "    print(errno.errorcode[e.errno])\n",
      "sec-py"};
  const std::string cfg = ReadHostFile(RuntimeRoot("sec-py") + "/pyvenv.cfg");
  RunResult r = Run(python_writer);
  // Refused by ownership (EACCES) before the read-only mount (EROFS) decides.
  EXPECT_TRUE(r.stdout_data == "EACCES\n" || r.stdout_data == "EROFS\n") << Describe(r);
  EXPECT_EQ(ReadHostFile(RuntimeRoot("sec-py") + "/pyvenv.cfg"), cfg);
}

TEST_F(RuntimeMounted, TheRootIsBoundReadOnlyNosuidNodev) {
  // Each program prints the options (mountinfo's sixth field) of the mount
  // at its runtime's directory (the fifth).
  const std::vector<Program> probes = {
      {Language::kPython,
       "for line in open('/proc/self/mountinfo'):\n"
       "    f = line.split()\n"
       "    if f[4] == '/opt/runtimes/sec-py':\n"
       "        print(f[5])\n",
       "sec-py"},
      {Language::kJavaScript,
       "for (const line of require('fs').readFileSync('/proc/self/mountinfo', "
       "'utf8').split('\\n')) {\n"
       "  const f = line.split(' ');\n"
       "  if (f[4] === '/opt/runtimes/sec-js') console.log(f[5]);\n"
       "}\n",
       "sec-js"},
      {Language::kBash,
       "while read -r id parent dev root point opts rest; do\n"
       "  [ \"$point\" = /opt/runtimes/sec-sh ] && echo \"$opts\"\n"
       "done < /proc/self/mountinfo\n",
       "sec-sh"},
  };
  for (const Program& probe : probes) {
    SCOPED_TRACE(probe.runtime);
    RunResult r = Run(probe);
    EXPECT_EQ(r.verdict, Verdict::kOk) << Describe(r);
    const std::string options = "," + r.stdout_data;
    for (const char* option : {",ro", ",nosuid", ",nodev"}) {
      EXPECT_NE(options.find(option), std::string::npos) << option << ": " << Describe(r);
    }
  }
}

TEST_F(RuntimeMounted, ASetuidProgramInTheRootRunsAsTheSandboxUser) {
  const std::string root = RuntimeRoot("sec-sh");
  ASSERT_TRUE(fs::exists(root + "/bin/id-suid"));
  ASSERT_NE(fs::status(root + "/bin/id-suid").permissions() & fs::perms::set_uid, fs::perms::none);
  RunResult r = Run({Language::kBash, "id-suid -u; id-suid -ru", "sec-sh"});
  EXPECT_EQ(r.verdict, Verdict::kOk) << Describe(r);
  EXPECT_EQ(r.stdout_data, "65534\n65534\n") << Describe(r);
}

TEST_F(RuntimeMounted, DotDotFromTheRuntimeStaysInTheSandbox) {
  const std::string host_shadow = ReadHostFile("/etc/shadow");
  const std::string host_first = host_shadow.substr(0, host_shadow.find('\n'));
  RunResult r = Run({Language::kPython,
                     "import os\n"
                     "print(sorted(os.listdir('/opt/runtimes/sec-py/..')))\n"
                     "print(sorted(os.listdir('/opt/runtimes/sec-py/../../..')))\n"
                     "for p in ['/opt/runtimes/sec-py/../../../etc/shadow',\n"
                     "          '/opt/runtimes/sec-py/../../../../../var/lib']:\n"
                     "    try:\n"
                     "        print(p, 'READ', open(p).read()[:80])\n"
                     "    except OSError as e:\n"
                     "        print(p, type(e).__name__)\n",
                     "sec-py"});
  EXPECT_EQ(r.verdict, Verdict::kOk) << Describe(r);
  // Only the chosen runtime is there; the others are never mounted.
  EXPECT_NE(r.stdout_data.find("['sec-py']"), std::string::npos) << Describe(r);
  EXPECT_EQ(r.stdout_data.find("sec-js"), std::string::npos) << Describe(r);
  EXPECT_EQ(r.stdout_data.find("READ"), std::string::npos) << Describe(r);
  if (!host_first.empty()) {
    EXPECT_EQ(r.stdout_data.find(host_first), std::string::npos);
  }
}

TEST_F(RuntimeMounted, LimitsHoldInARuntime) {
  Limits memory = QuickLimits();
  memory.memory_bytes = 64ull << 20;
  RunResult bomb =
      Run({Language::kJavaScript,
           "const chunks = [];\nfor (;;) chunks.push(Buffer.alloc(1 << 20, 1));\n", "sec-js"},
          memory);
  EXPECT_EQ(bomb.verdict, Verdict::kMemoryLimit) << Describe(bomb);

  Limits pids = QuickLimits();
  pids.max_pids = 16;
  RunResult forks = Run({Language::kPython,
                         "import errno, os, time\n"
                         "n = 0\n"
                         "try:\n"
                         "    while True:\n"
                         "        if os.fork() == 0:\n"
                         "            time.sleep(30)\n"
                         "            os._exit(0)\n"
                         "        n += 1\n"
                         "except OSError as e:\n"
                         "    print('refused', errno.errorcode[e.errno], n < 16)\n",
                         "sec-py"},
                        pids);
  EXPECT_NE(forks.stdout_data.find("refused EAGAIN True"), std::string::npos) << Describe(forks);

  Limits wall = QuickLimits();
  wall.wall_timeout_secs = 2;
  RunResult spin = Run({Language::kBash, "aevatar-probe; while :; do :; done", "sec-sh"}, wall);
  EXPECT_EQ(spin.verdict, Verdict::kWallTimeout) << Describe(spin);
  EXPECT_EQ(spin.stdout_data, std::string(testing::TestRuntimeRoot::kProbeText) + "\n");
}

TEST_F(RuntimeMounted, NumpyCannotAllocatePastTheMemoryLimit) {
  const std::string problem = testing::PythonDataRootProblem();
  ASSERT_EQ(problem, "") << problem;
  Limits limits = QuickLimits();
  limits.wall_timeout_secs = 30;
  limits.memory_bytes = 128ull << 20;
  RunResult r = Run({Language::kPython,
                     "import numpy as np\n"
                     "blocks = []\n"
                     "while True:\n"
                     "    blocks.append(np.ones(1 << 22))\n",  // 32 MiB each, touched
                     "python-data"},
                    limits);
  EXPECT_EQ(r.verdict, Verdict::kMemoryLimit) << Describe(r);
}

}  // namespace
}  // namespace aevatar::security_test
