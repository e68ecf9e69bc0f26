#include "nyxid/node_agent/tool_run.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include "absl/strings/str_split.h"
#include "base/errno_error.h"
#include "os/output_pump.h"
#include "os/process.h"
#include "os/unique_fd.h"

namespace aevatar::nyxid::node {
namespace {

absl::StatusOr<std::string> FindInPath(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  for (absl::string_view dir : absl::StrSplit(path ? path : "/usr/bin:/bin", ':')) {
    std::string candidate = std::string(dir) + "/" + name;
    if (!dir.empty() && os::IsExecutable(candidate)) return candidate;
  }
  return absl::NotFoundError(name + " is not on PATH");
}

absl::StatusOr<os::UniqueFd> MemoryFile(const std::string& bytes) {
  os::UniqueFd fd(::memfd_create("nyxid-node-stdin", MFD_CLOEXEC));
  if (fd.get() < 0) return base::ErrnoError("memfd_create", errno);
  size_t written = 0;
  while (written < bytes.size()) {
    ssize_t n = ::write(fd.get(), bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return base::ErrnoError("write memfd", errno);
    written += static_cast<size_t>(n);
  }
  if (::lseek(fd.get(), 0, SEEK_SET) != 0) return base::ErrnoError("lseek memfd", errno);
  return fd;
}

struct Pipe {
  os::UniqueFd read_end;
  os::UniqueFd write_end;
};

absl::StatusOr<Pipe> MakePipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return base::ErrnoError("pipe2", errno);
  Pipe pipe{os::UniqueFd(fds[0]), os::UniqueFd(fds[1])};
  ::fcntl(pipe.read_end.get(), F_SETFL, O_NONBLOCK);
  return pipe;
}

}  // namespace

absl::StatusOr<ToolRun> RunTool(const std::vector<std::string>& argv,
                                const std::string& stdin_bytes, std::chrono::milliseconds timeout,
                                size_t max_output_bytes) {
  auto program = FindInPath(argv.at(0));
  if (!program.ok()) return program.status();
  std::vector<std::string> args = argv;
  args[0] = *program;
  auto input = MemoryFile(stdin_bytes);
  auto out = MakePipe();
  auto err = MakePipe();
  if (!input.ok()) return input.status();
  if (!out.ok()) return out.status();
  if (!err.ok()) return err.status();
  std::vector<std::string> env;
  for (const char* name : {"PATH", "HOME", "USER", "LANG"}) {
    if (const char* value = std::getenv(name)) env.push_back(std::string(name) + "=" + value);
  }
  auto child =
      os::SpawnProgram(args, env, input->get(), out->write_end.get(), err->write_end.get());
  if (!child.ok()) return child.status();
  out->write_end.reset();
  err->write_end.reset();
  os::PumpOptions options;
  options.deadline = std::chrono::steady_clock::now() + timeout;
  options.max_bytes_per_stream = max_output_bytes;
  auto pumped = os::PumpOutput(out->read_end.get(), err->read_end.get(), *child, options);
  auto status = child->Wait();
  if (!pumped.ok()) return pumped.status();
  if (!status.ok()) return status.status();
  ToolRun run;
  run.timed_out = pumped->end == os::PumpEnd::kDeadline;
  run.exit_code = WIFEXITED(*status) ? WEXITSTATUS(*status) : -1;
  run.out = std::move(pumped->out.data);
  run.err = std::move(pumped->err.data);
  return run;
}

}  // namespace aevatar::nyxid::node
