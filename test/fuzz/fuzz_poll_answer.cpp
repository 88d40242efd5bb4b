// The classification of a retrieve_future answer (client/futures/poll_answer.hpp): a 200 body that is a
// result, "try again", complete_metadata, a failure or something unreadable, and the queue state of a
// 408 body. The first byte chooses the Content-Type the body arrives with (JSON, protobuf, text or
// none); the rest is the body. Besides the sanitizers: neither function throws, an unreadable answer
// always says why and nothing else does, and each kind carries only its own fields.
#include "fuzz_support.hpp"

#include "client/futures/poll_answer.hpp"
#include "http/message.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

namespace tinker::fuzz {
namespace {

using client::futures::AnswerKind;
using client::futures::PollAnswer;

constexpr const char* kContentTypes[] = {"application/json", "application/x-protobuf", "text/plain", ""};

void check_answer(const PollAnswer& answer, const http::Response& response) {
  if ((answer.kind == AnswerKind::malformed) != !answer.problem.empty()) {
    property_failed("a problem is given exactly when the answer is unreadable");
  }
  if (response.is_protobuf() && answer.kind != AnswerKind::result) property_failed("a protobuf body is a result");
  if (answer.payload_size && answer.kind != AnswerKind::complete_metadata) {
    property_failed("a payload size outside complete_metadata");
  }
  if ((answer.queue_state_given || answer.queue_state_reason) && answer.kind != AnswerKind::try_again) {
    property_failed("a queue state outside try_again");
  }
  if (!answer.error_message.empty() && answer.kind != AnswerKind::failed) {
    property_failed("an error message outside a failed answer");
  }
}

}  // namespace
}  // namespace tinker::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tinker;
  const fuzz::Selected input(data, size, std::size(fuzz::kContentTypes));
  http::Response response;
  response.status = 200;
  const std::string content_type = fuzz::kContentTypes[input.choice()];
  if (!content_type.empty()) response.headers.emplace_back("content-type", content_type);
  response.body = std::string(input.rest());
  try {
    fuzz::check_answer(client::futures::classify_answer(response), response);
    response.status = 408;
    const auto queue_state = client::futures::queue_state_of_408(response);
    if (queue_state && queue_state->kind != client::futures::AnswerKind::try_again) {
      fuzz::property_failed("a 408 body with a queue state is a try_again");
    }
  } catch (...) {
    fuzz::property_failed("classify_answer or queue_state_of_408 threw");
  }
  return 0;
}
