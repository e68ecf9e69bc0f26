#ifndef AEVATAR_TESTS_TESTING_TEMP_DIR_H_
#define AEVATAR_TESTS_TESTING_TEMP_DIR_H_

#include <stdlib.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace aevatar::testing {

// A fresh private temporary directory in `parent`, removed with everything
// in it by the destructor. path() is empty when it could not be made.
class TempDir {
 public:
  explicit TempDir(const std::string& parent = "/tmp") {
    std::string tmpl = parent + "/aevatar-test.XXXXXX";
    path_ = ::mkdtemp(tmpl.data()) != nullptr ? tmpl : "";
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace aevatar::testing

#endif  // AEVATAR_TESTS_TESTING_TEMP_DIR_H_
