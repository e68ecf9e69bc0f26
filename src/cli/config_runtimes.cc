#include "cli/config_runtimes.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "absl/strings/str_cat.h"

namespace aevatar::cli {
namespace {

std::string_view Trim(std::string_view text) {
  const size_t begin = text.find_first_not_of(" \t\r");
  if (begin == std::string_view::npos) return {};
  return text.substr(begin, text.find_last_not_of(" \t\r") - begin + 1);
}

// The 1-based line of each `[runtimes.NAME]` header (NAME bare or quoted).
std::map<std::string, int> HeaderLines(std::string_view text) {
  std::map<std::string, int> lines;
  int number = 0;
  for (size_t start = 0; start <= text.size(); ++number) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = Trim(text.substr(start, end - start));
    start = end + 1;
    if (line.size() < 2 || line[0] != '[' || line[1] == '[') continue;
    const size_t close = line.find(']');
    if (close == std::string_view::npos) continue;
    std::string_view name = Trim(line.substr(1, close - 1));
    constexpr std::string_view prefix = kRuntimesTable;
    if (name.substr(0, prefix.size()) != prefix) continue;
    name = Trim(name.substr(prefix.size()));
    if (name.empty() || name[0] != '.') continue;
    name = Trim(name.substr(1));
    if (name.size() >= 2 && (name[0] == '"' || name[0] == '\'') && name.back() == name[0]) {
      name = name.substr(1, name.size() - 2);
    }
    lines.emplace(std::string(name), number + 1);
  }
  return lines;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> RuntimeTableArgs(const cpptoml::table& runtimes,
                                                          std::string_view text,
                                                          const std::string& path) {
  const std::map<std::string, int> lines = HeaderLines(text);
  struct Entry {
    int line;
    std::string value;
  };
  std::vector<Entry> entries;
  for (const auto& [name, value] : runtimes) {
    const auto found = lines.find(name);
    const int line = found == lines.end() ? 0 : found->second;
    const std::string where =
        absl::StrCat("config ", path, " line ", line, ": runtime \"", name, "\"");
    if (!value->is_table()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, " must be a table: [runtimes.NAME] with language and root"));
    }
    std::string language;
    std::string root;
    for (const auto& [key, field] : *value->as_table()) {
      std::string* slot = key == "language" ? &language : key == "root" ? &root : nullptr;
      if (slot == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": unknown key \"", key, "\" (a runtime has language and root)"));
      }
      auto text_value = cpptoml::get_impl<std::string>(field);
      if (!text_value) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": key \"", key, "\" must be a string"));
      }
      *slot = *text_value;
    }
    if (language.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(where, " needs a language"));
    }
    entries.push_back({line, absl::StrCat(name, "=", language, root.empty() ? "" : ":", root)});
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.line, a.value) < std::tie(b.line, b.value);
  });
  std::vector<std::string> args;
  for (const Entry& entry : entries) {
    args.push_back(kRuntimeFlag);
    args.push_back(entry.value);
  }
  return args;
}

}  // namespace aevatar::cli
