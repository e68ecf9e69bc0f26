#include "chrono/codex/codex_events.h"

#include "nlohmann/json.hpp"

namespace aevatar::chrono {
namespace {

using nlohmann::json;

// The agent message's text when `line` is a completed agent_message item.
const std::string* AgentMessageText(const json& event) {
  if (!event.is_object()) return nullptr;
  auto type = event.find("type");
  if (type == event.end() || *type != "item.completed") return nullptr;
  auto item = event.find("item");
  if (item == event.end() || !item->is_object()) return nullptr;
  auto item_type = item->find("type");
  if (item_type == item->end() || *item_type != "agent_message") return nullptr;
  auto text = item->find("text");
  if (text == item->end() || !text->is_string()) return nullptr;
  return &text->get_ref<const std::string&>();
}

}  // namespace

std::string_view Utf8Prefix(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  size_t end = max_bytes;
  // Step back over continuation bytes (10xxxxxx) to the start of the
  // character that does not fit.
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

CodexAnswer ExtractCodexAnswer(std::string_view jsonl, size_t max_bytes) {
  CodexAnswer answer;
  while (!jsonl.empty()) {
    const size_t eol = jsonl.find('\n');
    const std::string_view line = jsonl.substr(0, eol);
    jsonl.remove_prefix(eol == std::string_view::npos ? jsonl.size() : eol + 1);
    // Cheap pre-filter: most lines are other events.
    if (line.find("agent_message") == std::string_view::npos) continue;
    const json event = json::parse(line, nullptr, /*allow_exceptions=*/false);
    const std::string* text = AgentMessageText(event);
    if (text == nullptr) continue;
    const std::string_view kept = Utf8Prefix(*text, max_bytes);
    answer.found = true;
    answer.text.assign(kept);
    answer.truncated = kept.size() < text->size();
  }
  return answer;
}

}  // namespace aevatar::chrono
