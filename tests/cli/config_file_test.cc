// The serves' config files: each key feeds its flag, the command line
// overrides the file, and unknown keys, wrong types and inline secrets are
// refused naming the key (and its line).
#include "cli/config_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace aevatar::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// A `serve` shaped like the real ones: text, integer, fractional, on/off and
// exclusive flags, a flag with two names, and one taking a secret inline.
struct FakeServe {
  CLI::App app{"fake"};
  CLI::App* serve = app.add_subcommand("serve", "serve");
  std::string listen = "127.0.0.1:1";
  std::string state_dir;
  std::string store;
  std::string jwks_file;
  std::string jwks_url;
  std::string nyxid_url;
  std::string api_key;
  int workers = 0;
  double retention_hours = 24;
  bool async_enabled = true;
  bool insecure_listen = false;

  FakeServe() {
    serve->add_option("--listen", listen);
    serve->add_option("--state-dir", state_dir)->required();
    serve->add_option("--store", store);
    auto* file = serve->add_option("--jwks-file", jwks_file);
    file->excludes(serve->add_option("--jwks-url", jwks_url));
    serve->add_option("--nyxid-base-url,--nyxid-url", nyxid_url);
    MarkSecretFlag(serve->add_option("--api-key", api_key));
    serve->add_option("--workers", workers);
    serve->add_option("--retention-hours", retention_hours);
    serve->add_flag("--disable-async", [this](int64_t) { async_enabled = false; });
    serve->add_flag("--insecure-listen", insecure_listen);
    AddConfigFlag(serve, "fake");
  }

  // Parses `args` (argv[0] first) as the program would, reading `service`'s config file.
  void ParseArgs(std::vector<std::string> args, const std::string& service = "fake") {
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    ParseWithServeConfig(app, serve, service, static_cast<int>(argv.size()), argv.data());
  }

  // Parses `fake serve --config <file holding toml> extra…`.
  void Parse(const std::string& toml, std::vector<std::string> extra = {}) {
    char dir_template[] = "/tmp/config_file_test.XXXXXX";
    ASSERT_NE(mkdtemp(dir_template), nullptr);
    const std::string path = std::string(dir_template) + "/fake.toml";
    std::ofstream(path) << toml;
    std::vector<std::string> args = {"fake", "serve", "--config", path};
    args.insert(args.end(), extra.begin(), extra.end());
    ParseArgs(std::move(args));
    std::remove(path.c_str());
    rmdir(dir_template);
  }

  // The error of ConfigFileArgs on `toml` ("" when it succeeds).
  std::string Error(const std::string& toml) {
    auto args = ConfigFileArgs(*serve, "f.toml", toml, {});
    return args.ok() ? "" : std::string(args.status().message());
  }
};

TEST(ConfigFile, EveryKindOfKeyReachesItsFlag) {
  FakeServe fake;
  fake.Parse(R"(# the executor
listen = "127.0.0.1:0"
state-dir = "/var/lib/x"
workers = 3
retention-hours = 1.5
disable-async = true
insecure-listen = true
nyxid-url = "http://n"
)");
  EXPECT_EQ(fake.listen, "127.0.0.1:0");
  EXPECT_EQ(fake.state_dir, "/var/lib/x");
  EXPECT_EQ(fake.workers, 3);
  EXPECT_DOUBLE_EQ(fake.retention_hours, 1.5);
  EXPECT_FALSE(fake.async_enabled);
  EXPECT_TRUE(fake.insecure_listen);
  EXPECT_EQ(fake.nyxid_url, "http://n");
}

TEST(ConfigFile, CommandLineOverridesTheFile) {
  FakeServe fake;
  fake.Parse("listen = \"127.0.0.1:9\"\nstate-dir = \"/from/file\"\nworkers = 3\n",
             {"--listen", "127.0.0.1:0", "--workers=5"});
  EXPECT_EQ(fake.listen, "127.0.0.1:0");
  EXPECT_EQ(fake.workers, 5);
  EXPECT_EQ(fake.state_dir, "/from/file");
}

TEST(ConfigFile, CommandLineFlagDropsTheFileKeysItExcludes) {
  FakeServe fake;
  fake.Parse("state-dir = \"/s\"\njwks-file = \"/j.json\"\n", {"--jwks-url", "http://j"});
  EXPECT_EQ(fake.jwks_url, "http://j");
  EXPECT_EQ(fake.jwks_file, "");
}

TEST(ConfigFile, FalseLeavesAnOnOffFlagOut) {
  FakeServe fake;
  auto args = ConfigFileArgs(*fake.serve, "f.toml", "disable-async = false\n", {});
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_THAT(*args, IsEmpty());
  fake.Parse("state-dir = \"/s\"\ndisable-async = false\n");
  EXPECT_TRUE(fake.async_enabled);
}

TEST(ConfigFile, ArgumentsFollowTheFileOrder) {
  FakeServe fake;
  auto args = ConfigFileArgs(*fake.serve, "f.toml", "workers = 2\nlisten = \"h:1\"\n", {});
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_THAT(*args, ElementsAre("--workers", "2", "--listen", "h:1"));
}

TEST(ConfigFile, UnknownKeyNamesItsLine) {
  FakeServe fake;
  const std::string error = fake.Error("listen = \"h:1\"\n\n# note\n  listen-port = 8081\n");
  EXPECT_THAT(error, HasSubstr("f.toml line 4"));
  EXPECT_THAT(error, HasSubstr("unknown key \"listen-port\""));
}

TEST(ConfigFile, UnderscoreSpellingIsUnknownWithAHint) {
  FakeServe fake;
  const std::string error = fake.Error("workers = 1\nstate_dir = \"/s\"\n");
  EXPECT_THAT(error, HasSubstr("line 2: unknown key \"state_dir\""));
  EXPECT_THAT(error, HasSubstr("\"state-dir\""));
}

TEST(ConfigFile, TablesAndTheConfigKeyAreRefused) {
  FakeServe fake;
  EXPECT_THAT(fake.Error("workers = 1\n[tls]\ncert = \"c\"\n"),
              HasSubstr("line 2: unknown key \"tls\""));
  EXPECT_THAT(fake.Error("config = \"/other.toml\"\n"),
              HasSubstr("line 1: key \"config\" cannot be set"));
  EXPECT_THAT(fake.Error("help = true\n"), HasSubstr("unknown key \"help\""));
}

TEST(ConfigFile, SyntaxErrorNamesItsLine) {
  FakeServe fake;
  EXPECT_THAT(fake.Error("workers = 1\nlisten = \n"), HasSubstr("line 2"));
}

TEST(ConfigFile, WrongTypeNamesTheKey) {
  FakeServe fake;
  const std::pair<std::string, std::string> cases[] = {
      {"workers = \"8\"\n", "key \"workers\" must be an integer"},
      {"listen = 8081\n", "key \"listen\" must be a string"},
      {"retention-hours = \"1\"\n", "key \"retention-hours\" must be a number"},
      {"disable-async = 1\n", "key \"disable-async\" must be true or false"},
      {"listen = [\"a\"]\n", "key \"listen\" must be a string"},
  };
  for (const auto& [toml, expected] : cases) EXPECT_THAT(fake.Error(toml), HasSubstr(expected));
}

TEST(ConfigFile, TwoNamesOfOneFlagAreRefused) {
  FakeServe fake;
  EXPECT_THAT(fake.Error("nyxid-url = \"a\"\nnyxid-base-url = \"b\"\n"),
              HasSubstr("sets the same flag as \"nyxid-url\" (line 1)"));
}

TEST(ConfigFile, SecretsInlineAreRefused) {
  FakeServe fake;
  EXPECT_THAT(fake.Error("api-key = \"sk-123\"\n"),
              HasSubstr("line 1: key \"api-key\" cannot be set in a config file: it takes a "
                        "secret inline"));
  EXPECT_THAT(fake.Error("workers = 1\nstore = \"postgresql://app:hunter2@db/app\"\n"),
              HasSubstr("line 2: key \"store\" carries a password inline"));
  EXPECT_THAT(fake.Error("store = \"postgres:host=db user=app Password=hunter2\"\n"),
              HasSubstr("carries a password inline"));
  EXPECT_EQ(fake.Error("store = \"postgresql://app@db/app?passfile=/etc/aevatar/pgpass\"\n"), "");
}

// Without --config, /etc/aevatar/<service>.toml is read when it exists (a
// service name of this test process's own, removed afterwards).
TEST(ConfigFile, DefaultFileIsReadWithoutConfigFlag) {
  const std::string service = "config-file-test-" + std::to_string(getpid());
  const bool made_dir = mkdir("/etc/aevatar", 0755) == 0;
  const std::string path = "/etc/aevatar/" + service + ".toml";
  {
    std::ofstream out(path);
    out << "state-dir = \"/from/etc\"\nworkers = 2\n";
    ASSERT_TRUE(out.good()) << "cannot write " << path << " (tests run as root)";
  }
  FakeServe fake;
  EXPECT_NO_THROW(fake.ParseArgs({"fake", "serve", "--workers", "7"}, service));
  std::remove(path.c_str());
  if (made_dir) rmdir("/etc/aevatar");
  EXPECT_EQ(fake.state_dir, "/from/etc");
  EXPECT_EQ(fake.workers, 7);
}

TEST(ConfigFile, AbsentConfigFileIsAnError) {
  FakeServe fake;
  EXPECT_THROW(fake.ParseArgs({"fake", "serve", "--config", "/nonexistent/fake.toml"}),
               CLI::ConfigError);
}

}  // namespace
}  // namespace aevatar::cli
