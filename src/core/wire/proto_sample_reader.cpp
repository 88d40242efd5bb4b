// The usual SampleResponse read straight from the protobuf wire format, for decode_sample.
//
// Every sample's result is one small message: sequences (stop reason, tokens, maybe logprobs),
// perhaps prompt logprobs, and the cache-hit count. libprotobuf's generated parser first builds
// the message on an arena, copying each bytes field into a heap string, and the SDK then copies
// those into SampleResponse: three quarters of decoding a sample. This reader walks the bytes
// once to check their structure, then once more to decode the fields from views of the input.
//
// It reads only what it can read exactly as libprotobuf does and hands everything else back
// (returns false): a top-k matrix (a message field whose repeats merge), groups, a known field in
// an unexpected wire type, varints of 10 bytes (negative int32 values, overlong encodings), and
// malformed input, whose error libprotobuf's path reports. Unknown fields of the plain wire types
// are skipped, repeated sequences append, and a repeated singular field keeps its last value, as
// proto3 specifies.
#include "core/wire/json_writer.hpp"
#include "core/wire/proto_codec_internal.hpp"

#include <climits>
#include <cstdint>
#include <optional>
#include <string_view>

namespace tinker::wire::proto {
namespace {

// A cursor over one message's bytes. Each read returns false when the bytes are not in the
// plain forms this reader takes; the caller then gives up on the whole message.
class WireReader {
 public:
  explicit WireReader(std::string_view bytes) : at_(bytes.data()), end_(bytes.data() + bytes.size()) {}

  bool done() const noexcept { return at_ == end_; }

  // A field's key: its number (at least 1) and a wire type other than the group markers. At most
  // 4 bytes (field numbers below 2^25), like a length: 32-bit varints have limits of their own.
  bool key(std::uint32_t& field, WireType& type) noexcept {
    std::uint64_t value = 0;
    if (!varint(value, short_varint_bytes)) return false;
    field = static_cast<std::uint32_t>(value >> 3);
    const auto wire_type = static_cast<int>(value & 7);
    if (field == 0 || (wire_type != 0 && wire_type != 1 && wire_type != 2 && wire_type != 5)) return false;
    type = static_cast<WireType>(wire_type);
    return true;
  }

  // At most `max_bytes` bytes (9 at most, 63 bits): a 10th byte brings overflow rules this reader
  // leaves to libprotobuf.
  bool varint(std::uint64_t& value, int max_bytes = 9) noexcept {
    value = 0;
    for (int shift = 0; shift < 7 * max_bytes; shift += 7) {
      if (at_ == end_) return false;
      const auto byte = static_cast<std::uint8_t>(*at_++);
      value |= static_cast<std::uint64_t>(byte & 0x7F) << shift;
      if ((byte & 0x80) == 0) return true;
    }
    return false;
  }

  bool length_delimited(std::string_view& value) noexcept {
    std::uint64_t size = 0;
    if (!varint(size, short_varint_bytes) || size > static_cast<std::uint64_t>(end_ - at_)) return false;
    value = std::string_view(at_, static_cast<std::size_t>(size));
    at_ += size;
    return true;
  }

  bool skip(WireType type) noexcept {
    std::uint64_t ignored_value = 0;
    std::string_view ignored_bytes;
    switch (type) {
      case WireType::varint: return varint(ignored_value);
      case WireType::length_delimited: return length_delimited(ignored_bytes);
      case WireType::fixed64: return skip_bytes(8);
      case WireType::fixed32: return skip_bytes(4);
    }
    return false;
  }

 private:
  static constexpr int short_varint_bytes = 4;

  bool skip_bytes(std::size_t count) noexcept {
    if (static_cast<std::size_t>(end_ - at_) < count) return false;
    at_ += count;
    return true;
  }

  const char* at_;
  const char* end_;
};

class SequenceFields {
 public:
  std::int32_t stop_reason = 0;
  std::string_view tokens;
  std::string_view logprobs;
  std::optional<std::string_view> sequence_id;
};

bool read_sequence(std::string_view bytes, SequenceFields& out) {
  WireReader reader(bytes);
  while (!reader.done()) {
    std::uint32_t field = 0;
    WireType type{};
    if (!reader.key(field, type)) return false;
    std::uint64_t value = 0;
    switch (field) {
      case 1:  // stop_reason: an open enum, read as int32 (truncated like libprotobuf's)
        if (type != WireType::varint || !reader.varint(value)) return false;
        out.stop_reason = static_cast<std::int32_t>(static_cast<std::uint32_t>(value));
        break;
      case 2:
        if (type != WireType::length_delimited || !reader.length_delimited(out.tokens)) return false;
        break;
      case 3:
        if (type != WireType::length_delimited || !reader.length_delimited(out.logprobs)) return false;
        break;
      case 4:  // sequence_id (not in the 0.25 descriptor); bad UTF-8 is left to libprotobuf's error
        if (type != WireType::length_delimited || !reader.length_delimited(out.sequence_id.emplace())) return false;
        if (!is_valid_utf8(*out.sequence_id)) return false;
        break;
      default:
        if (!reader.skip(type)) return false;
    }
  }
  return true;
}

// The top-level fields; `on_sequence` sees each sequence's bytes in order. False: not plain.
template <class OnSequence>
bool read_response(std::string_view bytes, std::string_view& prompt_logprobs, std::int32_t& cache_hits,
                   OnSequence&& on_sequence) {
  WireReader reader(bytes);
  while (!reader.done()) {
    std::uint32_t field = 0;
    WireType type{};
    if (!reader.key(field, type)) return false;
    std::string_view value;
    std::uint64_t number = 0;
    switch (field) {
      case 1:
        if (type != WireType::length_delimited || !reader.length_delimited(value) || !on_sequence(value)) return false;
        break;
      case 2:
        if (type != WireType::length_delimited || !reader.length_delimited(prompt_logprobs)) return false;
        break;
      case 3: return false;  // top-k prompt logprobs: libprotobuf's merge rules
      case 4:
        if (type != WireType::varint || !reader.varint(number)) return false;
        cache_hits = static_cast<std::int32_t>(static_cast<std::uint32_t>(number));
        break;
      default:
        if (!reader.skip(type)) return false;
    }
  }
  return true;
}

}  // namespace

bool decode_plain_sample(std::string_view bytes, SampleResponse& out) {
  if (bytes.size() > static_cast<std::size_t>(INT_MAX)) return false;  // libprotobuf's limit, and its error
  // First the structure (so that malformed bytes get libprotobuf's error, never a field's), and
  // the number of sequences.
  std::string_view prompt_logprobs;
  std::int32_t cache_hits = 0;
  std::size_t sequences = 0;
  const auto check_sequence = [&sequences](std::string_view sequence_bytes) {
    SequenceFields fields;
    ++sequences;
    return read_sequence(sequence_bytes, fields);
  };
  if (!read_response(bytes, prompt_logprobs, cache_hits, check_sequence)) return false;

  out.sequences.reserve(sequences);
  const auto decode = [&out](std::string_view sequence_bytes) {
    SequenceFields fields;
    (void)read_sequence(sequence_bytes, fields);  // read once already
    out.sequences.push_back(decode_sequence(fields.stop_reason, fields.tokens, fields.logprobs,
                                            Path("sequences", static_cast<int>(out.sequences.size()))));
    if (fields.sequence_id) out.sequences.back().sequence_id.emplace(*fields.sequence_id);
    return true;
  };
  (void)read_response(bytes, prompt_logprobs, cache_hits, decode);
  // Empty bytes mean "not requested", exactly like an absent field.
  if (!prompt_logprobs.empty()) out.prompt_logprobs = decode_prompt_logprobs(prompt_logprobs);
  out.prompt_cache_hit_tokens = cache_hits;
  return true;
}

}  // namespace tinker::wire::proto
