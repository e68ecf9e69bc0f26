// `[runtimes.NAME]` tables in a serve's config file: each becomes one
// `--runtime NAME=LANGUAGE:ROOT` in line order, a `--runtime` on the command
// line drops them all, and a malformed table is refused naming its line.
#include <string>
#include <vector>

#include "cli/config_file.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace aevatar::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct RuntimeServe {
  CLI::App app{"fake"};
  CLI::App* serve = app.add_subcommand("serve", "serve");
  std::string state_dir;
  std::vector<std::string> runtimes;

  explicit RuntimeServe(bool with_runtime_flag = true) {
    serve->add_option("--state-dir", state_dir);
    if (with_runtime_flag) serve->add_option("--runtime", runtimes)->allow_extra_args(false);
  }

  absl::StatusOr<std::vector<std::string>> Args(const std::string& toml,
                                                const std::vector<std::string>& command_line = {}) {
    return ConfigFileArgs(*serve, "f.toml", toml, command_line);
  }
};

constexpr char kTwoRuntimes[] = R"(state-dir = "/s"

[runtimes.python-data]
language = "python"
root = "/var/lib/aevatar/runtimes/python-data"

[runtimes."node-libs"]
root = "/srv/node"
language = "javascript"
)";

TEST(ConfigRuntimes, EachTableBecomesOneRuntimeFlagInLineOrder) {
  RuntimeServe fake;
  auto args = fake.Args(kTwoRuntimes);
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_THAT(*args, ElementsAre("--state-dir", "/s", "--runtime",
                                 "python-data=python:/var/lib/aevatar/runtimes/python-data",
                                 "--runtime", "node-libs=javascript:/srv/node"));
}

TEST(ConfigRuntimes, ARuntimeWithoutARootIsJustAdvertised) {
  RuntimeServe fake;
  auto args = fake.Args("[runtimes.python-data]\nlanguage = \"python\"\n");
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_THAT(*args, ElementsAre("--runtime", "python-data=python"));
}

TEST(ConfigRuntimes, ARuntimeOnTheCommandLineDropsTheFilesRuntimes) {
  RuntimeServe fake;
  auto args = fake.Args(kTwoRuntimes, {"--runtime", "x=bash:/srv/x"});
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_THAT(*args, ElementsAre("--state-dir", "/s"));
}

TEST(ConfigRuntimes, MalformedTablesNameTheirLine) {
  RuntimeServe fake;
  auto error = [&](const std::string& toml) {
    auto args = fake.Args(toml);
    return args.ok() ? std::string() : std::string(args.status().message());
  };
  EXPECT_THAT(error("state-dir = \"/s\"\n[runtimes.py]\nlanguage = \"python\"\nlibs = \"x\"\n"),
              HasSubstr("line 2: runtime \"py\": unknown key \"libs\""));
  EXPECT_THAT(error("[runtimes.py]\nlanguage = 3\n"),
              HasSubstr("line 1: runtime \"py\": key \"language\" must be a string"));
  EXPECT_THAT(error("\n\n[runtimes.py]\nroot = \"/r\"\n"),
              HasSubstr("line 3: runtime \"py\" needs a language"));
  EXPECT_THAT(error("[runtimes]\npy = \"python\"\n"), HasSubstr("runtime \"py\" must be a table"));
}

TEST(ConfigRuntimes, AServeWithoutRuntimesRefusesTheTable) {
  RuntimeServe fake(/*with_runtime_flag=*/false);
  auto args = fake.Args("[runtimes.py]\nlanguage = \"python\"\n");
  ASSERT_FALSE(args.ok());
  EXPECT_THAT(std::string(args.status().message()), HasSubstr("unknown key \"runtimes\""));
}

TEST(ConfigRuntimes, TheFilesRuntimesReachTheFlag) {
  RuntimeServe fake;
  auto args = fake.Args(kTwoRuntimes);
  ASSERT_TRUE(args.ok());
  std::vector<std::string> argv = {"fake", "serve"};
  argv.insert(argv.end(), args->begin(), args->end());
  std::vector<const char*> pointers;
  for (const std::string& arg : argv) pointers.push_back(arg.c_str());
  fake.app.parse(static_cast<int>(pointers.size()), pointers.data());
  EXPECT_THAT(fake.runtimes, ElementsAre("python-data=python:/var/lib/aevatar/runtimes/python-data",
                                         "node-libs=javascript:/srv/node"));
}

}  // namespace
}  // namespace aevatar::cli
