// The answer to every submitted operation is a future ticket, {"request_id":"..."} (sometimes with
// "model_id"). It is read here without building a JSON document when it has exactly that plain
// shape; any other text (escapes, other keys, null, odd bytes) is left to the schema decoder,
// which reads the rest of JSON and words the errors.
#pragma once

#include <tinker/types/futures.hpp>

#include <string_view>

namespace tinker::wire {

/// Reads `text` into `out` and returns true when it is one JSON object whose members are a
/// "request_id" string and at most a "model_id" string, each once, the strings of printable
/// ASCII without escapes; whitespace between tokens is allowed. Returns false, leaving `out`
/// unchanged, for anything else (valid JSON or not).
bool read_plain_future_ticket(std::string_view text, UntypedAPIFuture& out);

}  // namespace tinker::wire
