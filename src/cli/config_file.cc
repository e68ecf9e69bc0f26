#include "cli/config_file.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <system_error>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "cli/config_runtimes.h"
#include "cli/read_file.h"
#include "cpptoml.h"

namespace aevatar::cli {
namespace {

constexpr char kConfigDir[] = "/etc/aevatar/";

std::string_view StripLeadingSpace(std::string_view text) {
  const size_t start = text.find_first_not_of(" \t\r");
  return start == std::string_view::npos ? std::string_view() : text.substr(start);
}

bool IsBareKeyChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_';
}

// The key at the start of `line` (bare, "quoted" or 'quoted'), and where it ends.
std::pair<std::string, size_t> LeadingKey(std::string_view line) {
  if (!line.empty() && (line[0] == '"' || line[0] == '\'')) {
    const size_t close = line.find(line[0], 1);
    if (close == std::string_view::npos) return {"", 0};
    return {std::string(line.substr(1, close - 1)), close + 1};
  }
  size_t end = 0;
  while (end < line.size() && IsBareKeyChar(line[end])) ++end;
  return {std::string(line.substr(0, end)), end};
}

// The 1-based line where each top-level key of a TOML text (a table's name,
// for `[table]` and `a.b = …`) first appears. cpptoml keeps no positions, so
// the lines are found again in the text; lines inside multi-line strings and
// the keys of tables are skipped.
std::map<std::string, int> KeyLines(std::string_view text) {
  std::map<std::string, int> lines;
  bool in_table = false;
  bool in_multiline = false;
  int number = 0;
  for (std::string_view rest = text; !rest.empty() || number == 0;) {
    const size_t newline = rest.find('\n');
    std::string_view line = rest.substr(0, newline);
    rest = newline == std::string_view::npos ? std::string_view() : rest.substr(newline + 1);
    ++number;
    const bool was_multiline = in_multiline;
    // An odd count of """ or ''' opens or closes a multi-line string.
    const auto count = [line](std::string_view delim) {
      int n = 0;
      for (size_t at = line.find(delim); at != std::string_view::npos;
           at = line.find(delim, at + 3)) {
        ++n;
      }
      return n;
    };
    if ((count("\"\"\"") + count("'''")) % 2 == 1) in_multiline = !in_multiline;
    if (was_multiline) continue;
    line = StripLeadingSpace(line);
    if (line.empty() || line[0] == '#') continue;
    if (line[0] == '[') {
      in_table = true;
      line = StripLeadingSpace(line.substr(line.find_first_not_of('[')));
      lines.emplace(LeadingKey(line).first, number);
      continue;
    }
    if (in_table) continue;
    auto [key, end] = LeadingKey(line);
    const std::string_view after = StripLeadingSpace(line.substr(end));
    if (!key.empty() && !after.empty() && (after[0] == '=' || after[0] == '.')) {
      lines.emplace(std::move(key), number);
    }
  }
  return lines;
}

// `scheme://user:password@host…`, or libpq's `password=` (keyword or URI query).
bool CarriesPassword(std::string_view value) {
  const size_t scheme = value.find("://");
  if (scheme != std::string_view::npos) {
    std::string_view authority = value.substr(scheme + 3);
    authority = authority.substr(0, authority.find_first_of("/?#"));
    const size_t at = authority.rfind('@');
    if (at != std::string_view::npos &&
        authority.substr(0, at).find(':') != std::string_view::npos) {
      return true;
    }
  }
  return absl::StrContains(absl::AsciiStrToLower(std::string(value)), "password=");
}

struct Entry {
  int line = 0;
  std::string key;
  std::shared_ptr<cpptoml::base> value;
};

// The command-line form of the entry's value for `option` (none: a false
// on/off flag, left out); InvalidArgument naming the type it must have, or a
// password inline.
absl::StatusOr<std::vector<std::string>> ToArgs(const CLI::Option& option, const Entry& entry,
                                                const std::string& where) {
  const std::string flag = "--" + entry.key;
  const auto wrong = [&](const std::string& type) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": key \"", entry.key, "\" must be ", type));
  };
  if (option.get_expected_min() == 0) {
    auto on = cpptoml::get_impl<bool>(entry.value);
    if (!on) return wrong("true or false");
    if (*on) return std::vector<std::string>{flag};
    return std::vector<std::string>{};
  }
  const std::string type = option.get_type_name();
  if (absl::StartsWith(type, "INT") || absl::StartsWith(type, "UINT")) {
    auto number = cpptoml::get_impl<int64_t>(entry.value);
    const bool is_unsigned = absl::StartsWith(type, "UINT");
    if (!number || (is_unsigned && *number < 0)) {
      return wrong(is_unsigned ? "a non-negative integer" : "an integer");
    }
    return std::vector<std::string>{flag, std::to_string(*number)};
  }
  if (absl::StartsWith(type, "FLOAT")) {
    if (auto whole = cpptoml::get_impl<int64_t>(entry.value)) {
      return std::vector<std::string>{flag, std::to_string(*whole)};
    }
    auto number = cpptoml::get_impl<double>(entry.value);
    if (!number) return wrong("a number");
    std::ostringstream out;
    out.precision(17);
    out << *number;
    return std::vector<std::string>{flag, out.str()};
  }
  auto text = cpptoml::get_impl<std::string>(entry.value);
  if (!text) return wrong("a string");
  if (CarriesPassword(*text)) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": key \"", entry.key,
        "\" carries a password inline; secrets come only by file reference (for PostgreSQL: "
        "passfile= in the URL, or PGPASSFILE)"));
  }
  return std::vector<std::string>{flag, *text};
}

}  // namespace

void MarkSecretFlag(CLI::Option* option) { option->configurable(false); }

void AddConfigFlag(CLI::App* serve, const std::string& service) {
  serve
      ->add_option_function<std::string>(
          "--config", [](const std::string&) {},  // read before the parse

          absl::StrCat("TOML file of this command's flags (key = the flag's name "
                       "without --); default ",
                       kConfigDir, service, ".toml when it exists; flags override it"))
      ->configurable(false);
}

absl::StatusOr<std::vector<std::string>> ConfigFileArgs(
    const CLI::App& serve, const std::string& path, const std::string& text,
    const std::vector<std::string>& command_line) {
  std::shared_ptr<cpptoml::table> root;
  try {
    std::istringstream in{text};
    cpptoml::parser parser{in};
    root = parser.parse();
  } catch (const cpptoml::parse_exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("config ", path, ": ", e.what()));
  }
  std::set<const CLI::Option*> given;
  for (const std::string& token : command_line) {
    if (!absl::StartsWith(token, "--")) continue;
    const CLI::Option* option = serve.get_option_no_throw(token.substr(0, token.find('=')));
    if (option != nullptr) given.insert(option);
  }
  const std::map<std::string, int> lines = KeyLines(text);
  std::vector<Entry> entries;
  for (const auto& [key, value] : *root) {
    auto line = lines.find(key);
    entries.push_back({line == lines.end() ? 0 : line->second, key, value});
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.line, a.key) < std::tie(b.line, b.key);
  });

  std::vector<std::string> args;
  std::map<const CLI::Option*, const Entry*> set_by;
  for (const Entry& entry : entries) {
    const std::string where = absl::StrCat("config ", path, " line ", entry.line);
    const CLI::Option* runtime_flag = serve.get_option_no_throw(kRuntimeFlag);
    if (entry.key == kRuntimesTable && entry.value->is_table() && runtime_flag != nullptr) {
      auto runtimes = RuntimeTableArgs(*entry.value->as_table(), text, path);
      if (!runtimes.ok()) return runtimes.status();
      if (given.count(runtime_flag) == 0)
        args.insert(args.end(), runtimes->begin(), runtimes->end());
      continue;
    }
    const CLI::Option* option = entry.key.empty() || entry.key[0] == '-'
                                    ? nullptr
                                    : serve.get_option_no_throw("--" + entry.key);
    if (option == serve.get_help_ptr()) option = nullptr;
    if (option == nullptr || entry.value->is_table() || entry.value->is_table_array()) {
      std::string hint;
      const std::string dashed = absl::StrReplaceAll(entry.key, {{"_", "-"}});
      if (dashed != entry.key && serve.get_option_no_throw("--" + dashed) != nullptr) {
        hint = absl::StrCat(" (keys are spelled like the flags: \"", dashed, "\")");
      }
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": unknown key \"", entry.key, "\"", hint));
    }
    if (!option->get_configurable()) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": key \"", entry.key, "\" cannot be set in a config file",
          entry.key == "config" ? " (it names the file itself)"
                                : ": it takes a secret inline; secrets come only by file "
                                  "reference (a *-file key)"));
    }
    if (auto [earlier, fresh] = set_by.emplace(option, &entry); !fresh) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": key \"", entry.key, "\" sets the same flag as \"",
                       earlier->second->key, "\" (line ", earlier->second->line, ")"));
    }
    absl::StatusOr<std::vector<std::string>> converted = ToArgs(*option, entry, where);
    if (!converted.ok()) return converted.status();
    const bool overridden = std::any_of(given.begin(), given.end(), [option](const CLI::Option* g) {
      return g == option || g->get_excludes().count(const_cast<CLI::Option*>(option)) > 0 ||
             option->get_excludes().count(const_cast<CLI::Option*>(g)) > 0;
    });
    if (overridden) continue;
    args.insert(args.end(), converted->begin(), converted->end());
  }
  return args;
}

void ParseWithServeConfig(CLI::App& app, const CLI::App* serve, const std::string& service,
                          int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  auto name = serve == nullptr
                  ? args.end()
                  : std::find(args.begin() + std::min(argc, 1), args.end(), serve->get_name());
  if (name != args.end()) {
    const std::vector<std::string> rest(name + 1, args.end());
    const bool help = std::any_of(rest.begin(), rest.end(),
                                  [](const std::string& a) { return a == "--help" || a == "-h"; });
    std::string path;
    for (size_t i = 0; i < rest.size(); ++i) {
      if (rest[i] == "--config" && i + 1 < rest.size()) path = rest[i + 1];
      if (absl::StartsWith(rest[i], "--config=")) path = rest[i].substr(9);
    }
    std::error_code ignored;
    if (path.empty() &&
        std::filesystem::exists(absl::StrCat(kConfigDir, service, ".toml"), ignored)) {
      path = absl::StrCat(kConfigDir, service, ".toml");
    }
    if (!help && !path.empty()) {
      std::string text;
      if (!ReadWholeFile(path, text)) throw CLI::ConfigError("config " + path + ": cannot read it");
      absl::StatusOr<std::vector<std::string>> file_args = ConfigFileArgs(*serve, path, text, rest);
      if (!file_args.ok()) throw CLI::ConfigError(std::string(file_args.status().message()));
      args.insert(name + 1, file_args->begin(), file_args->end());
    }
  }
  std::vector<const char*> pointers;
  for (const std::string& arg : args) pointers.push_back(arg.c_str());
  app.parse(static_cast<int>(pointers.size()), pointers.data());
}

}  // namespace aevatar::cli
