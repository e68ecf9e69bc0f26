// Every command of the three binaries, found by walking their --help (so a
// command added later is checked too): its --help shows an example, the
// commands take --json, and --version names the release the packages carry.
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "cli/version.h"
#include "gtest/gtest.h"
#include "service_process.h"
#include "testing/shell_run.h"

namespace aevatar::testing {
namespace {

struct Help {
  std::string text;
  std::vector<std::string> subcommands;
};

// `binary path… --help`, and the names its "Subcommands:" section lists.
Help HelpOf(const TempDir& dir, const std::string& binary, const std::string& path) {
  const ShellRun run = RunShell(dir.path(), BinaryPath(binary) + path + " --help");
  EXPECT_EQ(run.exit_code, 0) << binary << path << ": " << run.err;
  Help help{run.out, {}};
  std::istringstream in(run.out);
  bool listing = false;
  for (std::string line; std::getline(in, line);) {
    if (line == "Subcommands:") {
      listing = true;
    } else if (listing && line.rfind("  ", 0) == 0 && line.size() > 2 && line[2] != ' ') {
      help.subcommands.push_back(line.substr(2, line.find(' ', 2) - 2));
    } else if (listing && !line.empty() && line[0] != ' ') {
      listing = false;
    }
  }
  return help;
}

// Every command path of `binary` ("" for itself, " workflow run", …) with its help.
std::map<std::string, Help> AllCommands(const TempDir& dir, const std::string& binary) {
  std::map<std::string, Help> commands;
  std::vector<std::string> pending = {""};
  while (!pending.empty()) {
    const std::string path = pending.back();
    pending.pop_back();
    Help help = HelpOf(dir, binary, path);
    for (const std::string& sub : help.subcommands) pending.push_back(path + " " + sub);
    commands[path] = std::move(help);
  }
  return commands;
}

bool HasExampleLine(const std::string& help) {
  std::istringstream in(help);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Example", 0) == 0) return true;
  }
  return false;
}

TEST(CliHelp, EveryCommandOfEveryBinaryShowsAnExample) {
  TempDir dir;
  for (const char* binary : {"aevatar", "nyxid", "chrono-sandbox"}) {
    const std::map<std::string, Help> commands = AllCommands(dir, binary);
    EXPECT_GT(commands.size(), 3u) << binary;
    for (const auto& [path, help] : commands) {
      EXPECT_TRUE(HasExampleLine(help.text))
          << binary << path << " --help has no \"Example\" line:\n"
          << help.text;
    }
  }
}

// Every command that runs (no subcommands of its own) takes --json: a
// client command prints one JSON document, a foreground server JSON log
// lines. The one exception speaks JSON-RPC on stdout already.
TEST(CliHelp, EveryCommandTakesJson) {
  TempDir dir;
  const std::set<std::string> exempt = {"aevatar mcp"};  // stdout is the MCP JSON-RPC stream
  // The walk reaches the deepest commands (a guard against a help format
  // change that would make it find nothing).
  const std::map<std::string, std::vector<std::string>> reached = {
      {"aevatar", {" workflow run", " codex credential ensure", " vault rotate-key", " backup"}},
      {"nyxid", {" node daemon run", " node ssh-credentials add", " ssh exec", " keys rotate"}},
      {"chrono-sandbox", {" run", " serve"}},
  };
  for (const auto& [binary, expected] : reached) {
    const std::map<std::string, Help> commands = AllCommands(dir, binary);
    for (const std::string& path : expected) EXPECT_EQ(commands.count(path), 1u) << binary << path;
    for (const auto& [path, help] : commands) {
      if (path.empty() || !help.subcommands.empty() || exempt.count(binary + path) > 0) continue;
      EXPECT_NE(help.text.find("--json"), std::string::npos)
          << binary << path << " --help has no --json:\n"
          << help.text;
    }
  }
}

TEST(CliHelp, VersionIsTheReleaseThePackagesCarry) {
  std::ifstream packaging(std::string(AEVATAR_SOURCE_DIR) + "/cmake/packaging.cmake");
  std::stringstream text;
  text << packaging.rdbuf();
  std::smatch match;
  const std::string cmake = text.str();
  ASSERT_TRUE(
      std::regex_search(cmake, match, std::regex(R"re(AEVATAR_PACKAGE_VERSION "([0-9.]+)")re")));
  EXPECT_EQ(match[1].str(), cli::kVersion);
  TempDir dir;
  for (const std::string binary : {"aevatar", "nyxid", "chrono-sandbox"}) {
    const ShellRun run = RunShell(dir.path(), BinaryPath(binary) + " --version");
    EXPECT_EQ(run.exit_code, 0) << binary << run.err;
    EXPECT_EQ(run.out, binary + " " + cli::kVersion + "\n");
  }
}

}  // namespace
}  // namespace aevatar::testing
