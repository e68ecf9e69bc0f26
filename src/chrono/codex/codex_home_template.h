#ifndef AEVATAR_CHRONO_CODEX_CODEX_HOME_TEMPLATE_H_
#define AEVATAR_CHRONO_CODEX_CODEX_HOME_TEMPLATE_H_

#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "chrono/codex/codex_profile.h"
#include "os/unique_fd.h"
#include "sandbox/runner.h"

// The Codex home every managed run starts from.
//
// In an empty CODEX_HOME, Codex creates and migrates five SQLite databases
// and writes its bundled skills before it does anything else: about 80 ms
// of each run natively, and far more under gVisor's ptrace platform, where
// every system call is trapped. So chrono-sandbox runs Codex once, at start,
// on the managed backend, with no network and nobody's data: it fails to
// reach its model and exits. The home it leaves, minus config.toml and the
// per-installation id, is kept as a tar. Each managed run is given those
// bytes as a read-only server file (kSandboxHomeTemplatePath) and unpacks
// them into its own fresh home. The host never unpacks the tar; it checks
// only its shape, and only later sandboxes read it.
namespace aevatar::chrono {

// The script of the template-making run (bash, a constant): writes the
// config into kSandboxCodexHome, runs Codex once outside any Git repository
// (its failure is expected), removes config.toml and installation_id, and
// replaces itself with `tar -cf - .` of the home, which is the run's stdout.
extern const char kCodexHomeTemplateScript[];

// The template-making run: BuildCodexRunSpec's run (binary, environment,
// limits) with kCodexHomeTemplateScript, a fixed prompt, a provider port
// nothing listens on and a placeholder token, on `backend`.
sandbox::RunSpec BuildCodexHomeTemplateRunSpec(const std::string& codex_host_path,
                                               std::string_view model,
                                               sandbox::BackendKind backend);

// The template in `result`: FailedPrecondition unless the run exited 0
// with untruncated stdout shaped as a tar (whole 512-byte blocks, the
// first header's "ustar" magic).
absl::StatusOr<std::shared_ptr<const std::string>> CodexHomeTemplateFrom(
    const sandbox::RunResult& result);

// Makes the template once, on its own thread, and hands it out. Runs that
// start before it is made (or when making it failed, which is logged) get
// none and make their own home, as Codex does unaided.
class CodexHomeTemplate {
 public:
  CodexHomeTemplate() = default;
  // Cancels a making still in progress and waits for it.
  ~CodexHomeTemplate();
  CodexHomeTemplate(const CodexHomeTemplate&) = delete;
  CodexHomeTemplate& operator=(const CodexHomeTemplate&) = delete;

  // Starts running `spec` (BuildCodexHomeTemplateRunSpec's) on `engine`;
  // at most once per object.
  void StartMaking(sandbox::Runner* engine, sandbox::RunSpec spec);

  // The template, or null while it is being made or if making it failed.
  std::shared_ptr<const std::string> Get() const;

 private:
  void Make(sandbox::Runner* engine, const sandbox::RunSpec& spec);

  mutable absl::Mutex mu_;
  std::shared_ptr<const std::string> template_ ABSL_GUARDED_BY(mu_);
  os::Pipe cancel_;
  std::thread maker_;
};

}  // namespace aevatar::chrono

#endif  // AEVATAR_CHRONO_CODEX_CODEX_HOME_TEMPLATE_H_
