#include "doubles/responses_events.h"

#include "nlohmann/json.hpp"

namespace aevatar::doubles {
namespace {

using Json = nlohmann::json;

std::string Event(const Json& data) {
  return "event: " + data["type"].get<std::string>() + "\ndata: " + data.dump() + "\n\n";
}

Json OutputItem(const Turn& turn, const std::string& suffix) {
  if (!turn.command.empty()) {
    // `login: false`: a login shell delays the command's first output (DESIGN §6).
    const Json arguments = {{"cmd", turn.command}, {"login", false}};
    return {{"type", "function_call"},
            {"id", "fc_" + suffix},
            {"call_id", "call_" + suffix},
            {"name", "exec_command"},
            {"arguments", arguments.dump()}};
  }
  return {{"type", "message"},
          {"id", "msg_" + suffix},
          {"role", "assistant"},
          {"content", Json::array({{{"type", "output_text"}, {"text", turn.answer}}})}};
}

}  // namespace

std::vector<std::string> TurnEvents(const Turn& turn, int response_number) {
  const std::string suffix = "double_" + std::to_string(response_number);
  const std::string response_id = "resp_" + suffix;
  const Json usage = {{"input_tokens", 0},
                      {"input_tokens_details", nullptr},
                      {"output_tokens", 0},
                      {"output_tokens_details", nullptr},
                      {"total_tokens", 0}};
  return {
      Event({{"type", "response.created"}, {"response", {{"id", response_id}}}}),
      Event({{"type", "response.output_item.done"},
             {"output_index", 0},
             {"item", OutputItem(turn, suffix)}}),
      Event(
          {{"type", "response.completed"}, {"response", {{"id", response_id}, {"usage", usage}}}}),
  };
}

std::vector<std::string> MalformedEvents() {
  return {
      "event: response.created\ndata: {\"type\": \"response.created\", \"response\": {\n\n",
      "event: response.output_item.done\ndata: [1, 2, \"not an item\"]\n\n",
      "data: {\"type\": \"response.unheard_of\", \"item\": 7}\n\n",
      "event: response.output_item.done\ndata: \xff\xfe not json\n\n",
  };
}

}  // namespace aevatar::doubles
