#ifndef AEVATAR_CLI_READ_FILE_H_
#define AEVATAR_CLI_READ_FILE_H_

#include <string>

namespace aevatar::cli {

// Reads the whole file at `path` (a program, its stdin, a workflow, a
// credentials file) into `out`; false when it cannot be read.
bool ReadWholeFile(const std::string& path, std::string& out);

}  // namespace aevatar::cli

#endif  // AEVATAR_CLI_READ_FILE_H_
