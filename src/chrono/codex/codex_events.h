#ifndef AEVATAR_CHRONO_CODEX_CODEX_EVENTS_H_
#define AEVATAR_CHRONO_CODEX_CODEX_EVENTS_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace aevatar::chrono {

inline constexpr size_t kMaxCodexOutputBytes = 64 << 10;

// What `codex exec --json` said, read from its JSON-lines stdout.
struct CodexAnswer {
  bool found = false;      // an agent_message item completed
  std::string text;        // the last one's text, cut to the byte limit (UTF-8 safe)
  bool truncated = false;  // the text was cut
};

// Returns the answer in `jsonl`: the text of the last
//   {"type":"item.completed","item":{"type":"agent_message","text":…}}
// line. Other events (including the `error` item Codex emits about unknown
// model metadata), lines that are not JSON objects and a final line cut off
// by the capture limit are ignored. `max_bytes` caps the text, cut at a
// UTF-8 character boundary.
CodexAnswer ExtractCodexAnswer(std::string_view jsonl, size_t max_bytes = kMaxCodexOutputBytes);

// Returns the longest prefix of `text` of at most `max_bytes` bytes that does
// not end inside a UTF-8 sequence.
std::string_view Utf8Prefix(std::string_view text, size_t max_bytes);

}  // namespace aevatar::chrono

#endif  // AEVATAR_CHRONO_CODEX_CODEX_EVENTS_H_
