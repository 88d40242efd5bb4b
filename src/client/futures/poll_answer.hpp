// The pieces of the retrieve_future poll loop (doc/protocol.md#futures) that need no I/O: the poll
// headers, the classification of an HTTP 200 answer, and the queue-state warning text.
#pragma once

#include "http/message.hpp"

#include <tinker/error.hpp>
#include <tinker/types/futures.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tinker::client::futures {

/// The operation whose future is polled; it names the X-Tinker-Request-Type header (doc/protocol.md#headers).
enum class FutureType {
  create_model,
  forward_backward,
  forward,
  optim_step,
  save_weights,
  load_weights,
  save_weights_for_sampler,
  save_weights_external,
  sample,
  unload_model,
};

/// "CreateModel", "ForwardBackward", ... as the Python SDK 0.25 sends them.
const char* request_type_header(FutureType type) noexcept;

/// True for the result types that 0.25 fetches as protobuf (ForwardBackwardOutput of
/// forward_backward and forward, SampleResponse), doc/protocol.md#protobuf and observed traffic.
bool has_protobuf_result(FutureType type) noexcept;

/// Seconds as the X-Tinker-Create-Promise-Roundtrip-Time header carries them: fixed notation,
/// microsecond precision ("0.012345"), never negative.
std::string roundtrip_seconds_text(std::chrono::microseconds roundtrip);

/// What one HTTP 200 answer of retrieve_future means (doc/protocol.md#futures table, in its order).
enum class AnswerKind {
  result,             ///< the operation's result (protobuf, or JSON that is none of the below)
  try_again,          ///< {"type":"try_again", ...}: not ready
  complete_metadata,  ///< {"status":"complete_metadata", ...}: re-poll with allow_metadata_only=false
  failed,             ///< {"error": ..., "category": ...}: the operation failed (doc/protocol.md#errors)
  malformed,          ///< not protobuf and not a JSON object: nothing can be made of it
};

class PollAnswer {
 public:
  PollAnswer() = default;

  AnswerKind kind = AnswerKind::result;
  /// try_again (and a 408 body): the queue state; `unknown` for missing or unrecognised values.
  QueueState queue_state = QueueState::unknown;
  bool queue_state_given = false;  ///< the body had a queue_state key at all
  std::optional<std::string> queue_state_reason;
  /// complete_metadata: the announced size in bytes (absent if the server did not say).
  std::optional<std::int64_t> payload_size;
  /// failed: the server's message and category (missing or unrecognised category = unknown).
  std::string error_message;
  RequestErrorCategory category = RequestErrorCategory::unknown;
  /// malformed: why (parse error, or "not a JSON object").
  std::string problem;
};

/// Classifies a 200 answer. Like the Python SDK, a body that is not protobuf is read as JSON
/// whatever its content type says. Never throws.
PollAnswer classify_answer(const http::Response& response);

/// The queue state carried by a 408 body (same shape as try_again, doc/protocol.md#futures), if the body is a
/// JSON object; nothing otherwise.
std::optional<PollAnswer> queue_state_of_408(const http::Response& response);

/// Who waits on a future, for the wording of the queue-state warning (doc/protocol.md#futures).
enum class QueueSubject { training, model_creation, sampling };

/// The warning for a paused queue, with the protocol's default reasons when the server gave none:
/// "Training for <id> is paused. Reason: <reason>." (prefix "Model creation" for
/// model_creation), or "Sampling is paused for sampler <id>. Reason: <reason>".
std::string queue_state_warning(QueueSubject subject, std::string_view subject_id, QueueState state,
                                const std::optional<std::string>& reason);

}  // namespace tinker::client::futures
