#ifndef AEVATAR_OS_INIT_IMAGE_H_
#define AEVATAR_OS_INIT_IMAGE_H_

#include <cstddef>
#include <string>

#include "os/child_plan.h"

namespace aevatar::os {

// The sandbox init is a separate executable (chrono-sandbox-init), exec'd
// for every run, so its plan crosses execve as an image: one flat buffer
// holding a copy of the ChildPlan and everything it points to, with every
// pointer replaced by its offset in the buffer (0 for null). The init maps
// the buffer and turns the offsets back into pointers.
//
// Descriptors are passed at fixed numbers (the spawner moves them there):
inline constexpr int kInitImageFd = 3;  // a memfd holding the image
inline constexpr int kInitStdinFd = 4;
inline constexpr int kInitStdoutFd = 5;
inline constexpr int kInitStderrFd = 6;
inline constexpr int kInitErrorFd = 7;
inline constexpr int kInitStatusFd = 8;
inline constexpr int kInitHandoffFd = 9;
inline constexpr int kInitFdCount = 7;  // 3..9

// Builds the image of `plan`; its descriptor fields are ignored (the image
// names the fixed numbers above).
std::string WriteInitImage(const ChildPlan& plan);

// Relocates the image at `image` (writable, `size` bytes) in place and returns
// the plan in it, or nullptr when an offset points outside the image.
// Freestanding: runs in the init, which has no C++ library.
ChildPlan* ReadInitImage(void* image, size_t size);

}  // namespace aevatar::os

#endif  // AEVATAR_OS_INIT_IMAGE_H_
