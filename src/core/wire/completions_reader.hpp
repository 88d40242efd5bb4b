// The answer to a batched result poll (POST /api/v1/retrieve_futures, doc/sampling.md#batched-result-polling),
// {"completions":[{"state":"finished","request_id":"...","response_payload_uncompressed_size":N},...],"cursor":N},
// read without building a JSON document when it has the plain shape the service sends: a client with
// many samples in flight reads one of these for every few dozen results. Any other text is left to
// the schema decoder (from_json<FuturesRetrieveResponse>), which reads the rest of JSON.
#pragma once

#include <tinker/types/futures_batch.hpp>

#include <cstdint>
#include <string_view>
#include <vector>

namespace tinker::wire {

/// One completion of a retrieve_futures answer, as views into the answer's text.
class PlainCompletion {
 public:
  std::string_view state;       ///< "finished", "failed" or a state this SDK does not know
  std::string_view request_id;  ///< empty when the completion has none
};

/// Reads `text` when it is one object with exactly the members "completions" (an array of
/// objects with a "state" string, optionally a "request_id" string and a
/// "response_payload_uncompressed_size" integer or null, each once) and "cursor" (an integer),
/// strings of printable ASCII without escapes, integers without sign, fraction or exponent:
/// replaces `completions` with views into `text` and sets `cursor`, returning true. Returns false
/// for anything else (valid JSON or not); `completions` and `cursor` may then hold anything.
bool read_plain_completions(std::string_view text, std::vector<PlainCompletion>& completions, std::int64_t& cursor);

/// Reads any retrieve_futures answer: the plain shape by read_plain_completions, anything else by
/// the schema decoder into `decoded`, which then holds the strings `completions` views. False when
/// the text is not a valid answer.
bool read_completions(std::string_view text, std::vector<PlainCompletion>& completions, std::int64_t& cursor,
                      FuturesRetrieveResponse& decoded);

}  // namespace tinker::wire
