#ifndef AEVATAR_TESTS_FUZZ_FUZZ_CHECK_H_
#define AEVATAR_TESTS_FUZZ_FUZZ_CHECK_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

// Shared by the fuzz targets (tests/fuzz/fuzz_<name>.cc). Each target is a
// LLVMFuzzerTestOneInput over the bytes one parser takes from outside; it
// passes when the parser neither crashes, throws nor hangs, and when the
// properties it checks with FUZZ_CHECK hold. Run by libFuzzer in the clang
// build (AEVATAR_FUZZ) and by replay_main.cc everywhere else.

// Aborts with the failed property, so both drivers record a crash.
#define FUZZ_CHECK(condition)                                                               \
  do {                                                                                      \
    if (!(condition)) {                                                                     \
      std::fprintf(stderr, "%s:%d: property failed: %s\n", __FILE__, __LINE__, #condition); \
      std::abort();                                                                         \
    }                                                                                       \
  } while (false)

namespace aevatar::fuzz {

inline std::string_view AsText(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace aevatar::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

#endif  // AEVATAR_TESTS_FUZZ_FUZZ_CHECK_H_
