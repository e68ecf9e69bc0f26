#include "cli/command_examples.h"

#include "CLI/CLI.hpp"

namespace aevatar::cli {

void SetCommandExamples(CLI::App& app, const std::vector<CommandExample>& examples) {
  for (const auto& [path, example] : examples) {
    CLI::App* command = &app;
    size_t start = 0;
    while (start < path.size()) {
      size_t end = path.find(' ', start);
      if (end == std::string_view::npos) end = path.size();
      const std::string name(path.substr(start, end - start));
      std::vector<CLI::App*> found =
          command->get_subcommands([&name](CLI::App* sub) { return sub->get_name() == name; });
      command = found.empty() ? nullptr : found.front();
      if (command == nullptr) break;
      start = end + 1;
    }
    if (command != nullptr) command->footer("Example:\n  " + std::string(example));
  }
}

}  // namespace aevatar::cli
