#ifndef AEVATAR_CLI_AEVATAR_SKILL_COMMAND_H_
#define AEVATAR_CLI_AEVATAR_SKILL_COMMAND_H_

#include <string>

namespace CLI {
class App;
}

namespace aevatar::cli {

// `aevatar skill publish DIR | list | show NAME[@VERSION]
//  | use NAME[@VERSION] [--mount-workflows] [--digest sha256:…]`, each with
// --json (the server's answer as it is). docs/skills.md.
struct SkillOptions {
  std::string url;
  std::string dir;
  std::string ref;  // NAME[@VERSION]
  bool mount_workflows = false;
  std::string digest;
  bool json = false;
};

struct SkillCommands {
  CLI::App* publish = nullptr;
  CLI::App* list = nullptr;
  CLI::App* show = nullptr;
  CLI::App* use = nullptr;
  bool parsed() const;
};

SkillCommands AddSkillCommand(CLI::App& app, SkillOptions& options);
// Returns the exit code: 0 on success, 1 when the server refused or the
// mount failed, 2 for bad arguments.
int RunSkillCommand(const SkillCommands& commands, const SkillOptions& options);

}  // namespace aevatar::cli

#endif  // AEVATAR_CLI_AEVATAR_SKILL_COMMAND_H_
