#include "cli/read_file.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace aevatar::cli {

// A directory opens fine with ifstream and reads as empty (an empty program
// would run): anything but a regular file is refused.
bool ReadWholeFile(const std::string& path, std::string& out) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) return false;
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return false;
  out = text.str();
  return true;
}

}  // namespace aevatar::cli
