#ifndef AEVATAR_OS_UNIQUE_FD_H_
#define AEVATAR_OS_UNIQUE_FD_H_

#include <string_view>
#include <utility>

#include "absl/status/statusor.h"

namespace aevatar::os {

// Owns one file descriptor and closes it on destruction. Move-only.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  // Gives up ownership; returns the fd (or -1).
  int release() { return std::exchange(fd_, -1); }
  // Closes the owned fd (if any) and takes ownership of `fd`.
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

struct Pipe {
  UniqueFd read_end;
  UniqueFd write_end;
};

// Returns a pipe whose ends are O_CLOEXEC.
absl::StatusOr<Pipe> MakePipe();

// Writes all of `bytes` to `fd` (retrying short writes and EINTR). `what`
// names the file in the error.
absl::Status WriteAll(int fd, std::string_view bytes, std::string_view what);

// Reads exactly `size` bytes into `buffer`; false at EOF or on error (a
// record that was never sent, or only partly).
bool ReadExactly(int fd, void* buffer, size_t size);

// Writes one byte to a wake-up pipe's write end. Best effort: a full pipe
// already holds a wake-up, and a closed reader has nobody left to wake.
void WriteWakeByte(int write_fd);

// Returns a sealed-size-free memfd (O_CLOEXEC) holding `contents`, positioned at
// offset 0, suitable as a child's stdin.
absl::StatusOr<UniqueFd> MakeMemfdWithContents(const char* name, std::string_view contents);

// Sets O_NONBLOCK on `fd`.
absl::Status SetNonBlocking(int fd);

}  // namespace aevatar::os

#endif  // AEVATAR_OS_UNIQUE_FD_H_
