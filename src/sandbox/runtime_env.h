#ifndef AEVATAR_SANDBOX_RUNTIME_ENV_H_
#define AEVATAR_SANDBOX_RUNTIME_ENV_H_

// Runtime environments: libraries an operator offers to programs of one
// language, chosen per run by name.
//
// Each language has a default runtime, the host's interpreter with its
// standard library only: the sandbox hides the host's third-party Python
// directories (Debian's dist-packages, /usr/local's) from every run
// (HiddenLibraryDirs), so installing python3-pandas on the host does not
// silently change what every program sees. An operator declares a runtime
// as a name, a language and a host directory (its root); a run that chooses
// it gets the root bound read-only (nosuid, nodev) at /opt/runtimes/NAME and
// the language's way of finding libraries pointed there:
//   python      the root is a virtual environment (pyvenv.cfg,
//               bin/python3, lib/pythonX.Y/site-packages; see
//               scripts/python-runtime): the run's interpreter is the root's
//               bin/python3, still with -I, so its site-packages replace the
//               system's;
//   javascript, typescript
//               the root holds node_modules/: /node_modules in the sandbox
//               links to it, found by require() and import from /workspace;
//   bash        the root holds bin/: it comes first on PATH.

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "sandbox/run_spec.h"
#include "sandbox/runtime_name.h"  // ValidateRuntimeName, re-exported for its callers

namespace aevatar::sandbox {

// Where a chosen runtime's root appears inside the sandbox: kRuntimesDir/NAME.
inline constexpr char kRuntimesDir[] = "/opt/runtimes";

// One operator-declared runtime environment.
struct RuntimeEnv {
  std::string name;  // see ValidateRuntimeName
  Language language = Language::kPython;
  std::string root;  // absolute host directory; never shown to callers
};

// Parses the `--runtime` flag's value "NAME=LANGUAGE:ROOT" (ROOT may hold
// ':'). With `root_required` false, "NAME=LANGUAGE" is accepted too (a
// service that only advertises runtimes). InvalidArgument names the part
// that is wrong.
absl::StatusOr<RuntimeEnv> ParseRuntimeFlag(std::string_view text, bool root_required = true);

// Returns FailedPrecondition, naming the runtime and what is missing, unless
// `env`'s root is an absolute directory outside /tmp (the native backend's
// root mount point hides it) that is not writable by group or others and
// holds what its language needs (python: pyvenv.cfg and an executable
// bin/python3; javascript/typescript: node_modules/; bash: bin/).
absl::Status CheckRuntimeRoot(const RuntimeEnv& env);

// Validates a set of runtimes at start-up: names valid and distinct, each
// root checked with CheckRuntimeRoot.
absl::Status CheckRuntimes(const std::vector<RuntimeEnv>& runtimes);

// The runtime a run named: null for "" (the language's default), else the
// declared runtime of that name. A typed 400 otherwise: UNKNOWN_RUNTIME
// (no such runtime) or RUNTIME_LANGUAGE_MISMATCH (declared for another
// language). Messages name the runtime and languages, never a host path.
absl::StatusOr<const RuntimeEnv*> ResolveRuntime(const std::vector<RuntimeEnv>& runtimes,
                                                 Language language, std::string_view name);

// Debian's shared-library alternatives (/etc/alternatives/*.so*, e.g.
// libblas.so.3-x86_64-linux-gnu), as {link, target} pairs, for the targets
// that lie under /usr/: /usr/lib/…/libblas.so.3 points through them, and a
// run's generated /etc mirrors just these links so that numpy's BLAS loads.
struct AlternativeLink {
  std::string path;    // /etc/alternatives/NAME
  std::string target;  // absolute, under /usr/
};
std::vector<AlternativeLink> LibraryAlternatives();

// The host's third-party Python library directories that exist now
// (/usr/lib/python3/dist-packages, /usr/local/lib/python3.N/dist-packages,
// …): every native run gets an empty read-only tmpfs over each.
std::vector<std::string> HiddenLibraryDirs();

}  // namespace aevatar::sandbox

#endif  // AEVATAR_SANDBOX_RUNTIME_ENV_H_
