#ifndef AEVATAR_DOUBLES_RESPONSES_SCRIPT_H_
#define AEVATAR_DOUBLES_RESPONSES_SCRIPT_H_

#include <string>
#include <string_view>

// The responses-double's script: what the test model does with one
// Responses-API request. It is a TEST DOUBLE standing in for a real model
// provider (which cannot exist offline): it reads directives out of the
// caller's prompt instead of understanding it.
namespace aevatar::doubles {

enum class Fault {
  kNone,
  kServerError,  // "[double:500]": HTTP 500, no stream
  kHang,         // "[double:hang]": headers, then nothing until the client leaves
  kSlow,         // "[double:slow]": the normal events, spaced out
  kMalformed,    // "[double:malformed]": a stream of broken events
};

struct Turn {
  Fault fault = Fault::kNone;
  // Exactly one of these is the model's move: run a command, or answer.
  std::string command;  // non-empty: call exec_command with this `cmd`
  std::string answer;   // the final answer otherwise
};

// The default answer when the prompt holds no directive.
inline constexpr std::string_view kDefaultAnswer =
    "I am the responses-double test model; no model is behind me.";

// Decides the turn for a Responses-API request body (JSON). Directives, read
// from the user messages of `input`:
//   "Reply with exactly TEXT"  -> answer TEXT (to the end of its line, trimmed)
//   "Run `CMD`"                -> call exec_command {"cmd": CMD}; once the input
//                                 holds that call's output, answer
//                                 "Command output:\n<output>"
//   "[double:…]" markers       -> the faults above
// A body that is not a JSON object with an `input` array gets the default
// answer: the double never fails on what it is sent.
Turn DecideTurn(std::string_view request_body);

}  // namespace aevatar::doubles

#endif  // AEVATAR_DOUBLES_RESPONSES_SCRIPT_H_
