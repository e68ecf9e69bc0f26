#include "doubles/responses_script.h"

#include <optional>
#include <vector>

#include "nlohmann/json.hpp"

namespace aevatar::doubles {
namespace {

using Json = nlohmann::json;

std::string_view Trim(std::string_view text) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  return text;
}

// The text of a message's content: a string, or an array of parts with `text`.
std::string ContentText(const Json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string text;
  if (!content.is_array()) return text;
  for (const Json& part : content) {
    if (!part.is_object()) continue;
    const auto it = part.find("text");
    if (it != part.end() && it->is_string()) {
      if (!text.empty()) text += "\n";
      text += it->get<std::string>();
    }
  }
  return text;
}

struct Conversation {
  std::string user_text;  // every user message, in order
  bool has_call_output = false;
  std::string call_output;  // the newest function_call_output
};

// A string member, or `fallback` when it is missing or of another type.
std::string StringMember(const Json& object, const char* name, std::string fallback) {
  const auto it = object.find(name);
  return it != object.end() && it->is_string() ? it->get<std::string>() : fallback;
}

Conversation ReadConversation(const Json& input) {
  Conversation conversation;
  for (const Json& item : input) {
    if (!item.is_object()) continue;
    const std::string type = StringMember(item, "type", "message");
    if (type == "function_call_output") {
      conversation.has_call_output = true;
      const auto output = item.find("output");
      conversation.call_output = output == item.end() ? "" : ContentText(*output);
    } else if (type == "message" && StringMember(item, "role", "") == "user") {
      const auto content = item.find("content");
      if (content == item.end()) continue;
      conversation.user_text += ContentText(*content);
      conversation.user_text += "\n";
    }
  }
  return conversation;
}

Fault FindFault(std::string_view text) {
  if (text.find("[double:500]") != std::string_view::npos) return Fault::kServerError;
  if (text.find("[double:hang]") != std::string_view::npos) return Fault::kHang;
  if (text.find("[double:slow]") != std::string_view::npos) return Fault::kSlow;
  if (text.find("[double:malformed]") != std::string_view::npos) return Fault::kMalformed;
  return Fault::kNone;
}

// "Reply with exactly TEXT": the last one wins (Codex adds its own context
// before the prompt, never after).
std::optional<std::string> FindReply(std::string_view text) {
  constexpr std::string_view kReply = "Reply with exactly ";
  const size_t at = text.rfind(kReply);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = text.substr(at + kReply.size());
  rest = rest.substr(0, rest.find('\n'));
  return std::string(Trim(rest));
}

// "Run `CMD`": the command between the backticks that follow the last "Run ".
std::optional<std::string> FindCommand(std::string_view text) {
  constexpr std::string_view kRun = "Run `";
  const size_t at = text.rfind(kRun);
  if (at == std::string_view::npos) return std::nullopt;
  const std::string_view rest = text.substr(at + kRun.size());
  const size_t end = rest.find('`');
  if (end == std::string_view::npos || end == 0) return std::nullopt;
  return std::string(rest.substr(0, end));
}

}  // namespace

Turn DecideTurn(std::string_view request_body) {
  Turn turn;
  const Json body = Json::parse(request_body, nullptr, /*allow_exceptions=*/false);
  const Json* input = nullptr;
  if (body.is_object()) {
    const auto it = body.find("input");
    if (it != body.end() && it->is_array()) input = &*it;
  }
  if (input == nullptr) {
    turn.answer = std::string(kDefaultAnswer);
    return turn;
  }
  const Conversation conversation = ReadConversation(*input);
  turn.fault = FindFault(conversation.user_text);
  if (auto command = FindCommand(conversation.user_text)) {
    if (!conversation.has_call_output) {
      turn.command = *command;
    } else {
      turn.answer = "Command output:\n" + conversation.call_output;
    }
    return turn;
  }
  if (auto reply = FindReply(conversation.user_text)) {
    turn.answer = *reply;
    return turn;
  }
  turn.answer = std::string(kDefaultAnswer);
  return turn;
}

}  // namespace aevatar::doubles
