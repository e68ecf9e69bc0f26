// The driver of a fuzz target where libFuzzer is not available (the GCC
// build): feeds the target every file of its corpus once, then a fixed number
// of deterministic mutations of them, so the property the target asserts is
// checked over the same >= 10,000 inputs on every run.
//
//   fuzz_<name> CORPUS_DIR [--mutations=N] [--seed=S]
//
// A failed property or a crash aborts the process (the ctest fails); an
// exception that escapes the target ends in std::terminate. Exit 0 means
// every input passed. The input that crashed is written to
// ./fuzz-replay-failure (from the signal handler), so it can be replayed and
// added to the corpus once fixed.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.h"

namespace {

constexpr size_t kMaxInputBytes = 64 * 1024;

// Tokens that parsers of this project treat specially: JSON and YAML
// structure, numbers at the edges of int64/double, HTTP framing, and bytes
// that are not UTF-8.
const std::string_view kInteresting[] = {"null",
                                         "true",
                                         "false",
                                         "[]",
                                         "{}",
                                         "\"\"",
                                         "0",
                                         "-1",
                                         "1.5",
                                         "1e308",
                                         "-1e309",
                                         "9223372036854775807",
                                         "9223372036854775808",
                                         "18446744073709551616",
                                         "\"\\u0000\"",
                                         "\"\\ud800\"",
                                         "\xff",
                                         "\xc0\x80",
                                         "\r\n",
                                         "\r\n\r\n",
                                         ":",
                                         ",",
                                         "{\"a\":",
                                         "- ",
                                         ": ",
                                         "&a ",
                                         "*a",
                                         "!!int ",
                                         "? ",
                                         "|\n",
                                         "%YAML 1.2\n",
                                         "---\n",
                                         "...\n",
                                         "Content-Length: ",
                                         "Transfer-Encoding: chunked\r\n",
                                         "0\r\n\r\n",
                                         "ffffffffffffffff\r\n",
                                         " HTTP/1.1\r\n",
                                         "GET /",
                                         "%00",
                                         "%",
                                         "?",
                                         "#",
                                         "op_",
                                         "nyxid_ag_",
                                         "eyJ",
                                         ".",
                                         "AAAA"};
const uint8_t kInterestingBytes[] = {0x00, 0x01, 0x0a, 0x0d, 0x20, 0x22, 0x27, 0x2c, 0x3a,
                                     0x5b, 0x5c, 0x5d, 0x7b, 0x7d, 0x7f, 0x80, 0xc3, 0xff};

class Mutator {
 public:
  Mutator(const std::vector<std::string>& corpus, uint64_t seed) : corpus_(corpus), rng_(seed) {}

  std::string Next() {
    std::string input = corpus_.empty() ? std::string() : corpus_[Below(corpus_.size())];
    const size_t rounds = 1 + Below(4);
    for (size_t i = 0; i < rounds; ++i) MutateOnce(input);
    if (input.size() > kMaxInputBytes) input.resize(kMaxInputBytes);
    return input;
  }

 private:
  size_t Below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(rng_() % n); }
  size_t Position(const std::string& s) { return Below(s.size() + 1); }

  void MutateOnce(std::string& s) {
    switch (Below(9)) {
      case 0:  // flip one bit
        if (!s.empty()) s[Below(s.size())] ^= static_cast<char>(1u << Below(8));
        break;
      case 1:  // overwrite a byte with an interesting one
        if (!s.empty()) {
          s[Below(s.size())] =
              static_cast<char>(kInterestingBytes[Below(sizeof(kInterestingBytes))]);
        }
        break;
      case 2: {  // insert an interesting token
        const std::string_view token = kInteresting[Below(std::size(kInteresting))];
        s.insert(Position(s), token);
        break;
      }
      case 3:  // truncate
        s.resize(Below(s.size() + 1));
        break;
      case 4: {  // erase a range
        const size_t at = Position(s);
        s.erase(at, Below(s.size() - at + 1));
        break;
      }
      case 5: {  // duplicate a range in place
        const size_t at = Position(s);
        const std::string chunk = s.substr(at, Below(64));
        s.insert(Position(s), chunk);
        break;
      }
      case 6: {  // splice in part of another corpus input
        if (corpus_.empty()) break;
        const std::string& other = corpus_[Below(corpus_.size())];
        const size_t from = Position(other);
        s.insert(Position(s), other.substr(from, Below(other.size() - from + 1)));
        break;
      }
      case 7: {  // deep nesting, the classic stack exhaustion
        const char open = "[{-"[Below(3)];
        s.insert(Position(s), std::string(1 + Below(4096), open));
        break;
      }
      default:  // a run of random bytes
        for (size_t n = Below(16); n > 0; --n) s.insert(Position(s), 1, static_cast<char>(rng_()));
        break;
    }
  }

  const std::vector<std::string>& corpus_;
  std::mt19937_64 rng_;
};

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The input being run, for the crash handler.
const std::string* volatile current_input = nullptr;

// Runs on SIGABRT/SIGSEGV/SIGBUS/SIGFPE/SIGILL: async-signal-safe calls only.
void SaveCurrentInput(int signal) {
  if (const std::string* input = current_input) {
    const int fd = ::open("fuzz-replay-failure", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
      (void)!::write(fd, input->data(), input->size());
      ::close(fd);
    }
    static const char kNote[] = "fuzz replay: the failing input is in ./fuzz-replay-failure\n";
    (void)!::write(2, kNote, sizeof(kNote) - 1);
  }
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

void Run(const std::string& input) {
  current_input = &input;
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
  current_input = nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: " << argv[0] << " CORPUS_DIR [--mutations=N] [--seed=S]\n";
    return 2;
  }
  size_t mutations = 10000;
  uint64_t seed = 0x5eed;
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.rfind("--mutations=", 0) == 0) mutations = std::strtoull(argv[i] + 12, nullptr, 10);
    if (arg.rfind("--seed=", 0) == 0) seed = std::strtoull(argv[i] + 7, nullptr, 10);
  }
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(argv[1])) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  // Directory order is not stable across file systems; the run must be.
  std::sort(files.begin(), files.end());
  std::vector<std::string> corpus;
  for (const auto& path : files) corpus.push_back(ReadFile(path));
  if (corpus.empty()) {
    std::cerr << "no corpus files in " << argv[1] << "\n";
    return 2;
  }
  for (int signal : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL})
    std::signal(signal, SaveCurrentInput);
  for (const std::string& input : corpus) Run(input);
  Mutator mutator(corpus, seed);
  for (size_t i = 0; i < mutations; ++i) Run(mutator.Next());
  std::cout << "replayed " << corpus.size() << " corpus inputs and " << mutations << " mutations\n";
  return 0;
}
