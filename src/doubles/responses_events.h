#ifndef AEVATAR_DOUBLES_RESPONSES_EVENTS_H_
#define AEVATAR_DOUBLES_RESPONSES_EVENTS_H_

#include <string>
#include <vector>

#include "doubles/responses_script.h"

// The Responses-API server-sent events the double streams for one turn, in
// the shape Codex reads (DESIGN §6): response.created, one
// response.output_item.done (a message or a function_call), then
// response.completed with usage.
namespace aevatar::doubles {

// Each element is one whole SSE event ("event: …\ndata: …\n\n").
// `response_number` makes the response and item ids unique per request.
std::vector<std::string> TurnEvents(const Turn& turn, int response_number);

// Events that are not valid: truncated JSON, an unknown type, a data line
// with no event, and a stream that ends without response.completed.
std::vector<std::string> MalformedEvents();

}  // namespace aevatar::doubles

#endif  // AEVATAR_DOUBLES_RESPONSES_EVENTS_H_
