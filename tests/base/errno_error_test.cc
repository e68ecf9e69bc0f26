#include "base/errno_error.h"

#include <cerrno>

#include "gtest/gtest.h"

namespace aevatar::base {
namespace {

TEST(ErrnoError, NamesTheCallAndMapsTheCode) {
  absl::Status status = ErrnoError("mount /proc", EPERM);
  EXPECT_TRUE(absl::IsPermissionDenied(status));
  EXPECT_EQ(status.message(), "mount /proc: Operation not permitted");
  EXPECT_TRUE(absl::IsNotFound(ErrnoError("open /nope", ENOENT)));
}

}  // namespace
}  // namespace aevatar::base
