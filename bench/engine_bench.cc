// engine_bench: what one sandboxed run costs, measured against a direct spawn
// of the same program in the same process (STYLE §12: ratios against a
// baseline in the same run; never a test).
//
// Benchmarks, each with 1 and 2 concurrent runners (Google Benchmark threads):
//   BM_DirectSpawn/bin_true     posix_spawn + waitpid of /bin/true
//   BM_DirectSpawn/bash_script  posix_spawn + waitpid of /bin/bash <file "true">,
//                               the very program and argv shape the engine
//                               execs, with the engine's program environment
//   BM_EngineRun                Engine::Run(bash, "true") with the production
//                               defaults: every containment step on (namespaces,
//                               rootfs + pivot_root, cgroup, rlimits, caps,
//                               seccomp)
//   BM_EngineRunAfterIdle       the same, 1 runner, each run after 50 ms idle:
//                               what a quiet service sees (kernel state such as
//                               cgroup v1's rcu_sync for cgroup.procs writes goes
//                               cold between spaced runs; back-to-back hides it)
//   BM_DirectSpawnAfterIdle     the direct bash baseline after the same idle
//   BM_EngineRunLargeCaller     the same, 1 runner, from a caller holding 256 MiB
//                               of touched memory (a service with a large heap)
//
// Every iteration's wall time is kept, so the summary printed after the
// Google Benchmark table gives medians, not means:
//   engine overhead = median(BM_EngineRun) - median(BM_DirectSpawn/bash_script)
// plus the same against /bin/true, the ratios, and runs/s with 2 runners.
//
// Needs root (the native backend creates namespaces, mounts and cgroups).
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "benchmark/benchmark.h"
#include "sandbox/engine.h"
#include "sandbox/run_spec.h"
#include "sandbox/runtime.h"

namespace {

using aevatar::sandbox::Engine;
using aevatar::sandbox::Language;
using aevatar::sandbox::RunSpec;
using aevatar::sandbox::Verdict;
using Clock = std::chrono::steady_clock;

// ---------------------------------------------------------------------------
// Per-iteration samples, one vector per (benchmark, runner thread). Each
// benchmark call clears its own vector first, so only the final (reported)
// Google Benchmark run is kept, not its iteration-count probes.

struct SampleKey {
  std::string name;
  int threads;
  int thread_index;
  bool operator<(const SampleKey& o) const {
    return std::tie(name, threads, thread_index) < std::tie(o.name, o.threads, o.thread_index);
  }
};

std::mutex samples_mu;
std::map<SampleKey, std::vector<double>>& AllSamples() {
  static auto* samples = new std::map<SampleKey, std::vector<double>>();
  return *samples;
}

// Returns this thread's sample vector, emptied. std::map nodes are stable, so
// the thread may push into it afterwards without the lock.
std::vector<double>* SamplesFor(const std::string& name, const benchmark::State& state) {
  std::lock_guard<std::mutex> lock(samples_mu);
  auto& vec = AllSamples()[{name, state.threads(), state.thread_index()}];
  vec.clear();
  vec.reserve(1 << 16);
  return &vec;
}

// All samples of one benchmark at one thread count, in milliseconds.
std::vector<double> Collect(const std::string& name, int threads) {
  std::lock_guard<std::mutex> lock(samples_mu);
  std::vector<double> all;
  for (const auto& [key, vec] : AllSamples()) {
    if (key.name == name && key.threads == threads) all.insert(all.end(), vec.begin(), vec.end());
  }
  std::sort(all.begin(), all.end());
  return all;
}

double Percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  size_t i = static_cast<size_t>(p * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(i, sorted.size() - 1)];
}

double MillisSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// ---------------------------------------------------------------------------
// Fixtures shared by every benchmark.

RunSpec BashTrueSpec() {
  RunSpec spec;
  spec.language = Language::kBash;
  spec.source = "true";
  return spec;  // production default limits and backend (native)
}

Engine& SharedEngine() {
  static Engine* engine = [] {
    auto created = Engine::Create();
    if (!created.ok()) {
      std::fprintf(stderr, "engine_bench: Engine::Create failed: %s\n",
                   std::string(created.status().message()).c_str());
      std::exit(2);
    }
    return created->release();
  }();
  return *engine;
}

// A host file holding the same bash source the engine writes into /workspace.
const std::string& BashScriptPath() {
  static const std::string* path = [] {
    char dir_template[] = "/tmp/engine_bench.XXXXXX";
    if (::mkdtemp(dir_template) == nullptr) {
      std::perror("engine_bench: mkdtemp");
      std::exit(2);
    }
    auto* script = new std::string(std::string(dir_template) + "/main.sh");
    std::ofstream(*script) << BashTrueSpec().source;
    return script;
  }();
  return *path;
}

// The environment the engine gives the program, so the baseline's bash does
// the same start-up work.
const std::vector<std::string>& ProgramEnv() {
  static const auto* env =
      new std::vector<std::string>(aevatar::sandbox::BuildProgramEnv(BashTrueSpec()));
  return *env;
}

// posix_spawn + waitpid of `path` with `argv` and the program environment,
// stdio on /dev/null. Returns the wait status, or -1 when the spawn failed.
int SpawnAndWait(const std::string& path, const std::vector<std::string>& argv) {
  std::vector<char*> argv_ptrs;
  for (const auto& arg : argv) argv_ptrs.push_back(const_cast<char*>(arg.c_str()));
  argv_ptrs.push_back(nullptr);
  std::vector<char*> envp_ptrs;
  for (const auto& var : ProgramEnv()) envp_ptrs.push_back(const_cast<char*>(var.c_str()));
  envp_ptrs.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  int err =
      ::posix_spawn(&pid, path.c_str(), &actions, nullptr, argv_ptrs.data(), envp_ptrs.data());
  posix_spawn_file_actions_destroy(&actions);
  if (err != 0) return -1;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return status;
}

// ---------------------------------------------------------------------------
// Benchmarks.

void BM_DirectSpawn(benchmark::State& state, const char* label, std::string path,
                    std::vector<std::string> argv) {
  std::vector<double>* samples = SamplesFor(std::string("direct/") + label, state);
  for (auto _ : state) {
    const Clock::time_point start = Clock::now();
    int status = SpawnAndWait(path, argv);
    samples->push_back(MillisSince(start));
    if (status != 0) {
      state.SkipWithError("direct spawn failed or exited non-zero");
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
}

// The direct baseline after the same 50 ms idle as BM_EngineRunAfterIdle: a
// quiet machine is slower for any process start (halted vCPUs, cold caches).
void BM_DirectSpawnAfterIdle(benchmark::State& state) {
  std::vector<double>* samples = SamplesFor("direct_idle", state);
  for (auto _ : state) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const Clock::time_point start = Clock::now();
    const int status = SpawnAndWait("/bin/bash", {"bash", BashScriptPath()});
    const double ms = MillisSince(start);
    samples->push_back(ms);
    state.SetIterationTime(ms / 1000);
    if (status != 0) {
      state.SkipWithError("direct spawn failed or exited non-zero");
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_EngineRun(benchmark::State& state) {
  Engine& engine = SharedEngine();
  const RunSpec spec = BashTrueSpec();
  std::vector<double>* samples = SamplesFor("engine", state);
  for (auto _ : state) {
    const Clock::time_point start = Clock::now();
    auto result = engine.Run(spec);
    samples->push_back(MillisSince(start));
    if (!result.ok()) {
      state.SkipWithError(std::string(result.status().message()).c_str());
      break;
    }
    if (result->verdict != Verdict::kOk || result->exit_code != 0) {
      state.SkipWithError("bash true did not exit 0 in the sandbox");
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_EngineRunAfterIdle(benchmark::State& state) {
  Engine& engine = SharedEngine();
  const RunSpec spec = BashTrueSpec();
  std::vector<double>* samples = SamplesFor("engine_idle", state);
  for (auto _ : state) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const Clock::time_point start = Clock::now();
    auto result = engine.Run(spec);
    const double ms = MillisSince(start);
    samples->push_back(ms);
    state.SetIterationTime(ms / 1000);
    if (!result.ok() || result->verdict != Verdict::kOk || result->exit_code != 0) {
      state.SkipWithError("engine run failed");
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
}

// The same run from a caller holding 256 MiB of touched memory, as a
// long-running service with a large heap would: the engine must not copy
// the caller's memory per run.
void BM_EngineRunLargeCaller(benchmark::State& state) {
  Engine& engine = SharedEngine();
  const RunSpec spec = BashTrueSpec();
  std::vector<char> ballast(256u << 20, 1);  // filled, so every page is resident
  benchmark::DoNotOptimize(ballast.data());
  std::vector<double>* samples = SamplesFor("engine_large_caller", state);
  for (auto _ : state) {
    const Clock::time_point start = Clock::now();
    auto result = engine.Run(spec);
    samples->push_back(MillisSince(start));
    if (!result.ok() || result->verdict != Verdict::kOk || result->exit_code != 0) {
      state.SkipWithError("engine run failed");
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
}

BENCHMARK_CAPTURE(BM_DirectSpawn, bin_true, "bin_true", "/bin/true", {"true"})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->Threads(1)
    ->Threads(2);
BENCHMARK_CAPTURE(BM_DirectSpawn, bash_script, "bash_script", "/bin/bash",
                  {"bash", BashScriptPath()})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->Threads(1)
    ->Threads(2);
BENCHMARK(BM_EngineRun)->UseRealTime()->Unit(benchmark::kMillisecond)->Threads(1)->Threads(2);
BENCHMARK(BM_DirectSpawnAfterIdle)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(40);
BENCHMARK(BM_EngineRunAfterIdle)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(40);
BENCHMARK(BM_EngineRunLargeCaller)->UseRealTime()->Unit(benchmark::kMillisecond)->Iterations(300);

// ---------------------------------------------------------------------------
// Summary: the console table as usual, plus runs/s captured per benchmark.

class CapturingReporter : public benchmark::ConsoleReporter {
 public:
  explicit CapturingReporter(OutputOptions options) : ConsoleReporter(options) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.run_type != Run::RT_Iteration || run.error_occurred) continue;
      auto it = run.counters.find("items_per_second");
      if (it != run.counters.end()) {
        // BENCHMARK_CAPTURE puts the capture name in args ("bin_true").
        const std::string name = run.run_name.function_name + "/" + run.run_name.args;
        runs_per_sec_[{name, static_cast<int>(run.threads)}] = it->second.value;
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }

  // Returns runs/s for the benchmark whose name contains `needle`, or 0.
  double RunsPerSec(const std::string& needle, int threads) const {
    for (const auto& [key, value] : runs_per_sec_) {
      if (key.second == threads && key.first.find(needle) != std::string::npos) return value;
    }
    return 0;
  }

 private:
  std::map<std::pair<std::string, int>, double> runs_per_sec_;
};

std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

void PrintSummary(const CapturingReporter& reporter, const std::string& load_before) {
  struct Row {
    const char* label;
    std::string sample_name;
    std::string bench_needle;
  };
  const Row rows[] = {
      {"direct /bin/true", "direct/bin_true", "bin_true"},
      {"direct bash <script>", "direct/bash_script", "bash_script"},
      {"engine bash 'true'", "engine", "BM_EngineRun/"},
  };
  std::printf("\n== engine_bench summary (load avg before: %s, after: %s, %ld CPUs) ==\n",
              load_before.c_str(), LoadAverage().c_str(), ::sysconf(_SC_NPROCESSORS_ONLN));
  std::printf("%-22s %7s %6s %9s %9s %9s %10s\n", "benchmark", "runners", "n", "p50 ms", "p90 ms",
              "max ms", "runs/s");
  double p50[3][3] = {};  // [row][threads]
  for (int threads : {1, 2}) {
    for (int r = 0; r < 3; ++r) {
      std::vector<double> s = Collect(rows[r].sample_name, threads);
      if (s.empty()) continue;
      p50[r][threads] = Percentile(s, 0.5);
      std::printf("%-22s %7d %6zu %9.3f %9.3f %9.3f %10.1f\n", rows[r].label, threads, s.size(),
                  p50[r][threads], Percentile(s, 0.9), s.back(),
                  reporter.RunsPerSec(rows[r].bench_needle, threads));
    }
  }
  for (const auto& [label, name] : {std::pair{"direct after 50ms idle", "direct_idle"},
                                    std::pair{"engine after 50ms idle", "engine_idle"},
                                    std::pair{"engine, 256MiB caller", "engine_large_caller"}}) {
    std::vector<double> s = Collect(name, 1);
    if (s.empty()) continue;
    std::printf("%-22s %7s %6zu %9.3f %9.3f %9.3f %10s\n", label, "1", s.size(), Percentile(s, 0.5),
                Percentile(s, 0.9), s.back(), "-");
  }
  auto overhead = [&](int threads, int base, const char* base_label) {
    if (p50[2][threads] == 0 || p50[base][threads] == 0) return;
    std::printf("engine overhead, %d runner%s, vs %-20s: %+8.3f ms median (ratio %.2fx)\n", threads,
                threads == 1 ? " " : "s", base_label, p50[2][threads] - p50[base][threads],
                p50[2][threads] / p50[base][threads]);
  };
  overhead(1, 1, "direct bash <script>");
  overhead(1, 0, "direct /bin/true");
  overhead(2, 1, "direct bash <script>");
  overhead(2, 0, "direct /bin/true");
  const std::vector<double> direct_idle = Collect("direct_idle", 1);
  const std::vector<double> engine_idle = Collect("engine_idle", 1);
  if (!direct_idle.empty() && !engine_idle.empty()) {
    std::printf(
        "engine overhead, after 50 ms idle, vs direct bash after the same idle: %+8.3f ms "
        "median\n",
        Percentile(engine_idle, 0.5) - Percentile(direct_idle, 0.5));
  }
  const std::vector<double> large = Collect("engine_large_caller", 1);
  if (!large.empty() && p50[1][1] > 0) {
    std::printf("engine overhead, 256 MiB caller, vs direct bash <script>: %+8.3f ms median\n",
                Percentile(large, 0.5) - p50[1][1]);
  }
  const double engine_rps = reporter.RunsPerSec("BM_EngineRun/", 2);
  const double direct_rps = reporter.RunsPerSec("bash_script", 2);
  if (engine_rps > 0) {
    std::printf(
        "engine throughput, 2 runners: %.1f runs/s (direct bash: %.1f runs/s, ratio %.2f)\n",
        engine_rps, direct_rps, direct_rps > 0 ? engine_rps / direct_rps : 0.0);
  }
  std::printf(
      "targets: overhead <= 1.5 ms median (1 runner, vs direct bash): %s; "
      ">= 500 runs/s with 2 runners: %s\n",
      p50[2][1] > 0 && p50[2][1] - p50[1][1] <= 1.5 ? "MET" : "NOT MET",
      engine_rps >= 500 ? "MET" : "NOT MET");
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  const std::string load_before = LoadAverage();
  // A display reporter passed in ignores --benchmark_color; honour it here.
  bool color = ::isatty(STDOUT_FILENO) != 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--benchmark_color=false" || arg == "--benchmark_color=no") color = false;
  }
  CapturingReporter reporter(color ? benchmark::ConsoleReporter::OO_Defaults
                                   : benchmark::ConsoleReporter::OO_Tabular);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  PrintSummary(reporter, load_before);
  benchmark::Shutdown();
  return 0;
}
