// The protobuf decoders (tinker::from_protobuf<T>): the first byte chooses the message type, the rest
// is the encoded message. Besides the sanitizers: a decoder succeeds or throws tinker::error
// (decode_error), and an accepted message encodes again to bytes that decode and encode to the same bytes (compared as
// bytes, not values: a float field may hold NaN). A SampleResponse, which decode_sample reads without
// libprotobuf when it can (wire/proto_sample_reader.cpp), decodes to the same value or the same error
// as through libprotobuf's generated parser.
#include "core/wire/proto_codec_internal.hpp"
#include "fuzz_support.hpp"

#include <tinker/codec.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace tinker::fuzz {
namespace {

template <class T>
void decode_as(std::string_view bytes) {
  T value;
  try {
    value = from_protobuf<T>(bytes);
  } catch (const error& e) {
    if (e.code() != errc::decode_error) property_failed("from_protobuf threw a code other than decode_error");
    return;
  }
  if constexpr (std::is_same_v<T, ForwardBackwardOutput>) {
    // A few bytes can claim up to 2^20 datums (the decoder's cap); round-tripping those takes seconds
    // under the sanitizers and would starve the fuzzer, so such values are only decoded.
    if (value.loss_fn_outputs.size() > 4096) return;
  }
  std::string encoded;
  try {
    encoded = to_protobuf(value);
  } catch (const error&) {
    return;  // a value the protobuf form cannot carry back
  }
  T again;
  try {
    again = from_protobuf<T>(encoded);
  } catch (const error& e) {
    property_failed(std::string("a re-encoded message does not decode: ") + e.what());
  }
  if (to_protobuf(again) != encoded) property_failed("encoding is not stable across a round trip");
}

// The re-encoded value (bytes compare NaN too) or the error's message.
std::string sample_outcome(SampleResponse (*decode)(std::string_view), std::string_view bytes) {
  try {
    return "value " + wire::proto::encode_sample(decode(bytes));
  } catch (const std::exception& e) {
    return std::string("error ") + e.what();
  }
}

void decode_sample_both_ways(std::string_view bytes) {
  if (sample_outcome(&wire::proto::decode_sample, bytes) !=
      sample_outcome(&wire::proto::decode_sample_with_libprotobuf, bytes)) {
    property_failed("the direct SampleResponse reader and libprotobuf disagree");
  }
}

}  // namespace
}  // namespace tinker::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tinker;
  const fuzz::Selected input(data, size, 3);
  switch (input.choice()) {
    case 0: fuzz::decode_as<ForwardBackwardRequest>(input.rest()); break;
    case 1: fuzz::decode_as<ForwardBackwardOutput>(input.rest()); break;
    default:
      fuzz::decode_as<SampleResponse>(input.rest());
      fuzz::decode_sample_both_ways(input.rest());
      break;
  }
  return 0;
}
