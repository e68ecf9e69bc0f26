// Hostile programs that try to exhaust the machine: processes, memory, CPU,
// output and disk. Each must end with the verdict of the limit it hit, and the
// host must be left as it was (the fixture checks processes, namespaces, run
// cgroups and mounts after every run).

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "security_fixture.h"

namespace aevatar::security_test {
namespace {

using ResourceExhaustion = SecurityTest;

// The host can still start a process after the run.
void ExpectHostCanFork() { EXPECT_EQ(std::system("/bin/true"), 0); }

TEST_F(ResourceExhaustion, ForkBombIsRefusedAtThePidsLimit) {
  // Each program forks sleepers until the kernel refuses, reports the errno,
  // and exits 0 while the sleepers are still alive. (bash is in the endless
  // bomb below: it retries a refused fork for 15 s before giving up.)
  const std::string spawner =
      "const { spawn } = require('child_process');\n"
      "let n = 0;\n"
      "function next() {\n"
      "  const c = spawn('/bin/sleep', ['60'], { stdio: 'ignore' });\n"
      "  c.on('error', (e) => { console.log('refused', e.code, n); process.exit(0); });\n"
      "  c.on('spawn', () => { n++; next(); });\n"
      "}\n"
      "next();\n";
  const std::vector<Program> programs = {
      {Language::kPython,
       "import os, time, errno\n"
       "n = 0\n"
       "while True:\n"
       "    try:\n"
       "        pid = os.fork()\n"
       "    except OSError as e:\n"
       "        print('refused', errno.errorcode[e.errno], n, flush=True)\n"
       "        break\n"
       "    if pid == 0:\n"
       "        time.sleep(60)\n"
       "        os._exit(0)\n"
       "    n += 1\n"},
      {Language::kJavaScript, spawner},
      {Language::kTypeScript, spawner},
  };
  Limits limits = QuickLimits();
  limits.max_pids = 32;
  for (const Program& program : programs) {
    SCOPED_TRACE(sandbox::LanguageName(program.language));
    RunResult r = Run(program, limits);
    EXPECT_EQ(r.verdict, Verdict::kPidsLimit) << Describe(r);
    EXPECT_NE(r.stdout_data.find("refused EAGAIN"), std::string::npos) << Describe(r);
  }
  ExpectHostCanFork();
}

TEST_F(ResourceExhaustion, EndlessForkBombEndsAtTheWallDeadline) {
  const std::vector<Program> programs = {
      {Language::kBash, "bomb() { bomb | bomb & }\nbomb\nsleep 30\n"},
      {Language::kPython,
       "import os, time\n"
       "while True:\n"
       "    try:\n"
       "        os.fork()\n"
       "    except OSError:\n"
       "        time.sleep(0.01)\n"},
  };
  Limits limits = QuickLimits();
  limits.wall_timeout_secs = 2;
  limits.max_pids = 64;
  for (const Program& program : programs) {
    SCOPED_TRACE(sandbox::LanguageName(program.language));
    RunResult r = Run(program, limits);
    EXPECT_EQ(r.verdict, Verdict::kWallTimeout) << Describe(r);
    EXPECT_EQ(r.signal, SIGKILL) << Describe(r);
  }
  ExpectHostCanFork();
}

TEST_F(ResourceExhaustion, MemoryBombIsKilledAtTheMemoryLimit) {
  const std::vector<Program> programs = {
      {Language::kPython,
       "chunks = []\n"
       "while True:\n"
       "    chunks.append(b'x' * (1 << 20))\n"},
      {Language::kJavaScript,
       "const chunks = [];\n"
       "for (;;) chunks.push(Buffer.alloc(1 << 20, 1));\n"},
      {Language::kBash, "s=xxxxxxxxxxxxxxxx\nwhile :; do s=\"$s$s\"; done\n"},
  };
  Limits limits = QuickLimits();
  limits.memory_bytes = 64ull << 20;
  for (const Program& program : programs) {
    SCOPED_TRACE(sandbox::LanguageName(program.language));
    RunResult r = Run(program, limits);
    EXPECT_EQ(r.verdict, Verdict::kMemoryLimit) << Describe(r);
    EXPECT_EQ(r.signal, SIGKILL) << Describe(r);
  }
  ExpectHostCanFork();
}

const std::vector<Program>& CpuSpinners() {
  static const std::vector<Program> programs = {
      {Language::kPython, "while True:\n    pass\n"},
      {Language::kJavaScript, "for (;;) {}\n"},
      {Language::kBash, "while :; do :; done\n"},
  };
  return programs;
}

TEST_F(ResourceExhaustion, CpuSpinIsStoppedByTheCpuLimit) {
  Limits limits = QuickLimits();
  limits.cpu_secs = 1;
  for (const Program& program : CpuSpinners()) {
    SCOPED_TRACE(sandbox::LanguageName(program.language));
    RunResult r = Run(program, limits);
    EXPECT_EQ(r.verdict, Verdict::kCpuLimit) << Describe(r);
    EXPECT_TRUE(r.signal == SIGXCPU || r.signal == SIGKILL) << Describe(r);
  }
}

TEST_F(ResourceExhaustion, CpuSpinWithOnlyAWallLimitEndsAtTheDeadline) {
  Limits limits = QuickLimits();
  limits.wall_timeout_secs = 2;
  limits.cpu_secs = 0;  // RLIMIT_CPU follows the wall limit
  for (const Program& program : CpuSpinners()) {
    SCOPED_TRACE(sandbox::LanguageName(program.language));
    RunResult r = Run(program, limits);
    EXPECT_EQ(r.verdict, Verdict::kWallTimeout) << Describe(r);
  }
}

TEST_F(ResourceExhaustion, HundredMegabyteOutputFloodIsTruncatedAtTheCap) {
  const std::vector<Program> programs = {
      {Language::kPython,
       "import sys\n"
       "chunk = b'A' * (1 << 20)\n"
       "for _ in range(100):\n"
       "    sys.stdout.buffer.write(chunk)\n"},
      {Language::kJavaScript,
       "const fs = require('fs');\n"
       "const chunk = Buffer.alloc(1 << 20, 'A');\n"
       "for (let i = 0; i < 100; i++) {\n"
       "  for (let off = 0; off < chunk.length;) {\n"
       "    try { off += fs.writeSync(1, chunk, off); }\n"
       "    catch (e) { if (e.code !== 'EAGAIN') throw e; }\n"
       "  }\n"
       "}\n"},
      {Language::kBash, "head -c 100M /dev/zero | tr '\\0' A\n"},
      {Language::kPython,  // the same flood on stderr
       "import sys\n"
       "chunk = b'A' * (1 << 20)\n"
       "for _ in range(100):\n"
       "    sys.stderr.buffer.write(chunk)\n"},
  };
  Limits limits = QuickLimits();
  limits.max_output_bytes = 1 << 20;
  for (const Program& program : programs) {
    SCOPED_TRACE(sandbox::LanguageName(program.language));
    RunResult r = Run(program, limits);
    // Ends by itself, well before the 10 s deadline, with the output verdict.
    EXPECT_EQ(r.verdict, Verdict::kOutputLimit) << Describe(r);
    EXPECT_EQ(r.exit_code, 0) << Describe(r);
    const bool on_stdout = r.stderr_data.empty();
    const std::string& captured = on_stdout ? r.stdout_data : r.stderr_data;
    EXPECT_EQ(captured.size(), limits.max_output_bytes) << Describe(r);
    EXPECT_EQ(captured.find_first_not_of('A'), std::string::npos) << Describe(r);
    EXPECT_TRUE(on_stdout ? r.stdout_truncated : r.stderr_truncated) << Describe(r);
  }
}

TEST_F(ResourceExhaustion, EndlessOutputFloodIsCappedAndEndsAtTheDeadline) {
  Limits limits = QuickLimits();
  limits.wall_timeout_secs = 2;
  limits.max_output_bytes = 64 << 10;
  RunResult r = Run({Language::kBash, "yes AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n"}, limits);
  EXPECT_EQ(r.verdict, Verdict::kWallTimeout) << Describe(r);
  EXPECT_EQ(r.stdout_data.size(), limits.max_output_bytes) << Describe(r);
  EXPECT_TRUE(r.stdout_truncated);
}

// Fills /tmp, /workspace and /dev/shm (each an 8 MiB tmpfs) until ENOSPC and
// prints "<dir> ENOSPC <bytes written>" for each.
TEST_F(ResourceExhaustion, DiskFillStopsWithEnospcInsideTheSandbox) {
  const std::string name = UniqueMarker("fill");
  const std::string dirs = "/tmp /workspace /dev/shm";
  const std::vector<Program> programs = {
      {Language::kPython,
       "import errno, os\n"
       "chunk = b'x' * 65536\n"
       "for d in '" +
           dirs +
           "'.split():\n"
           "    n = 0\n"
           "    try:\n"
           "        with open(d + '/" +
           name +
           "', 'wb', buffering=0) as f:\n"
           "            while n < (256 << 20):\n"
           "                n += f.write(chunk)\n"
           "        print(d, 'NOERROR', n)\n"
           "    except OSError as e:\n"
           "        print(d, errno.errorcode[e.errno], n)\n"},
      {Language::kJavaScript,
       "const fs = require('fs');\n"
       "const chunk = Buffer.alloc(65536, 'x');\n"
       "for (const d of '" +
           dirs +
           "'.split(' ')) {\n"
           "  let n = 0;\n"
           "  try {\n"
           "    const fd = fs.openSync(d + '/" +
           name +
           "', 'w');\n"
           "    while (n < (256 << 20)) n += fs.writeSync(fd, chunk);\n"
           "    console.log(d, 'NOERROR', n);\n"
           "  } catch (e) { console.log(d, e.code, n); }\n"
           "}\n"},
      {Language::kBash, "for d in " + dirs +
                            "; do\n"
                            "  if head -c 256M /dev/zero > \"$d/" +
                            name +
                            "\" 2>/dev/null; then r=NOERROR;\n"
                            "  else r=ENOSPC; fi\n"
                            "  echo \"$d $r $(stat -c %s \"$d/" +
                            name +
                            "\")\"\n"
                            "done\n"},
  };
  Limits limits = QuickLimits();
  limits.tmpfs_bytes = 8ull << 20;
  for (const Program& program : programs) {
    SCOPED_TRACE(sandbox::LanguageName(program.language));
    RunResult r = Run(program, limits);
    EXPECT_EQ(r.verdict, Verdict::kOk) << Describe(r);
    for (const std::string dir : {"/tmp", "/workspace", "/dev/shm"}) {
      const size_t at = r.stdout_data.find(dir + " ENOSPC ");
      ASSERT_NE(at, std::string::npos) << dir << "\n" << Describe(r);
      const uint64_t written = std::stoull(r.stdout_data.substr(at + dir.size() + 8));
      EXPECT_LE(written, limits.tmpfs_bytes) << dir;
      EXPECT_GT(written, limits.tmpfs_bytes / 2) << dir;
      // Nothing reached the host's own directories.
      EXPECT_FALSE(std::filesystem::exists(dir + "/" + name)) << dir;
    }
  }
}

TEST_F(ResourceExhaustion, ManySmallFilesRunOutOfInodesInsideTheSandbox) {
  const std::string name = UniqueMarker("inode");
  RunResult r = Run({Language::kPython,
                     "import errno\n"
                     "n = 0\n"
                     "try:\n"
                     "    while n < 100000:\n"
                     "        open('/tmp/" +
                         name +
                         "-%d' % n, 'w').close()\n"
                         "        n += 1\n"
                         "    print('NOERROR', n)\n"
                         "except OSError as e:\n"
                         "    print(errno.errorcode[e.errno], n)\n"});
  EXPECT_EQ(r.verdict, Verdict::kOk) << Describe(r);
  EXPECT_EQ(r.stdout_data.rfind("ENOSPC ", 0), 0u) << Describe(r);
  EXPECT_FALSE(std::filesystem::exists("/tmp/" + name + "-0"));
}

TEST_F(ResourceExhaustion, FileLargerThanTheFileSizeLimitIsStopped) {
  Limits limits = QuickLimits();
  limits.max_file_bytes = 1 << 20;
  // The program itself (not a child of bash) hits the limit.
  RunResult killed = Run({Language::kBash, "exec head -c 4M /dev/zero > /tmp/big\n"}, limits);
  EXPECT_EQ(killed.verdict, Verdict::kFileSizeLimit) << Describe(killed);
  EXPECT_EQ(killed.signal, SIGXFSZ) << Describe(killed);
  // With SIGXFSZ ignored (Python's default) the write fails instead, and the file stops at the
  // limit.
  RunResult ignored = Run({Language::kPython,
                           "import errno, os, signal\n"
                           "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
                           "with open('/tmp/big', 'wb', buffering=0) as f:\n"
                           "    n = f.write(b'x' * (4 << 20))\n"
                           "    try:\n"
                           "        f.write(b'x')\n"
                           "    except OSError as e:\n"
                           "        print(errno.errorcode[e.errno])\n"
                           "print(n, os.path.getsize('/tmp/big'))\n"},
                          limits);
  EXPECT_EQ(ignored.stdout_data, "EFBIG\n1048576 1048576\n") << Describe(ignored);
}

}  // namespace
}  // namespace aevatar::security_test
