// decode_plain_sample, the direct SampleResponse reader, against libprotobuf's generated parser:
// the same value or the same error for every message, whichever of the two decodes it.
#include "core/wire/proto_codec_internal.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace tinker::wire::proto {
namespace {

// What decoding gives: the re-encoded value (bytes compare NaN too) or the error's message.
std::string outcome(SampleResponse (*decode)(std::string_view), std::string_view bytes) {
  try {
    return "value " + encode_sample(decode(bytes));
  } catch (const std::exception& e) {
    return std::string("error ") + e.what();
  }
}

void expect_same_as_libprotobuf(std::string_view bytes) {
  EXPECT_EQ(outcome(&decode_sample, bytes), outcome(&decode_sample_with_libprotobuf, bytes));
}

// Wire-format pieces for hand-built messages.
std::string varint(std::uint64_t value) {
  std::string out;
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7F) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
  return out;
}
std::string key(std::uint32_t field, int wire_type) {
  return varint((static_cast<std::uint64_t>(field) << 3) | static_cast<std::uint64_t>(wire_type));
}
std::string bytes_field(std::uint32_t field, const std::string& value) {
  return key(field, 2) + varint(value.size()) + value;
}
std::string varint_field(std::uint32_t field, std::uint64_t value) {
  return key(field, 0) + varint(value);
}
std::string le32(std::uint32_t value) {
  std::string out(4, '\0');
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((value >> (8 * i)) & 0xFF);
  return out;
}

SampleResponse random_response(std::mt19937& random) {
  SampleResponse response;
  const int sequences = std::uniform_int_distribution<int>(0, 4)(random);
  for (int i = 0; i < sequences; ++i) {
    SampledSequence sequence;
    sequence.stop_reason = random() % 2 ? StopReason::stop : StopReason::length;
    const int tokens = std::uniform_int_distribution<int>(0, 40)(random);
    for (int t = 0; t < tokens; ++t) sequence.tokens.push_back(static_cast<TokenId>(random() % 200000));
    if (random() % 2 && tokens > 0) {
      sequence.logprobs.emplace();
      for (int t = 0; t < tokens; ++t) sequence.logprobs->push_back(-static_cast<float>(random() % 1000) / 37.0F);
    }
    response.sequences.push_back(sequence);
  }
  if (random() % 3 == 0) {
    response.prompt_logprobs.emplace();
    const int prompt = std::uniform_int_distribution<int>(1, 20)(random);
    for (int p = 0; p < prompt; ++p) {
      if (random() % 4 == 0) {
        response.prompt_logprobs->push_back(std::nullopt);
      } else {
        response.prompt_logprobs->push_back(-static_cast<float>(random() % 500) / 11.0F);
      }
    }
  }
  response.prompt_cache_hit_tokens = static_cast<std::int64_t>(random() % 5000);
  return response;
}

TEST(ProtoSampleReader, ReadsWhatLibprotobufWritesAndGivesTheSameValue) {
  std::mt19937 random(7);
  for (int i = 0; i < 300; ++i) {
    const SampleResponse response = random_response(random);
    const std::string bytes = encode_sample(response);
    SampleResponse plain;
    ASSERT_TRUE(decode_plain_sample(bytes, plain)) << "message " << i;
    EXPECT_EQ(plain, response);
    EXPECT_EQ(plain, decode_sample_with_libprotobuf(bytes));
  }
}

TEST(ProtoSampleReader, SkipsUnknownFieldsAndKeepsTheLastOfARepeatedSingularField) {
  const std::string sequence = varint_field(99, 5) + bytes_field(2, le32(7) + le32(8)) + varint_field(1, 1) +
                               key(7, 5) + le32(1) + bytes_field(2, le32(9)) + key(12, 1) +
                               std::string(8, 'x');  // stop reason 1: length
  const std::string bytes = varint_field(4, 3) + key(20, 1) + std::string(8, '\x01') + bytes_field(1, sequence) +
                            bytes_field(2, le32(0x7FC00000)) + bytes_field(2, le32(0xBF800000)) +
                            bytes_field(1, varint_field(1, 0)) + varint_field(4, 11) + bytes_field(300, "unknown");
  SampleResponse plain;
  ASSERT_TRUE(decode_plain_sample(bytes, plain));
  ASSERT_EQ(plain.sequences.size(), 2u);
  EXPECT_EQ(plain.sequences[0].tokens, std::vector<TokenId>{9});
  EXPECT_EQ(plain.sequences[0].stop_reason, StopReason::length);
  EXPECT_EQ(plain.sequences[1].stop_reason, StopReason::stop);
  ASSERT_TRUE(plain.prompt_logprobs.has_value());
  EXPECT_EQ(*plain.prompt_logprobs, std::vector<std::optional<float>>{-1.0F});
  EXPECT_EQ(plain.prompt_cache_hit_tokens, 11);
  expect_same_as_libprotobuf(bytes);
  // An overlong varint (value 1 in two bytes) reads as its value.
  expect_same_as_libprotobuf(bytes_field(1, key(1, 0) + "\x81\x00"));
}

TEST(ProtoSampleReader, LeavesOtherShapesToLibprotobuf) {
  const std::string sequence = bytes_field(1, varint_field(1, 1));
  const std::vector<std::string> others = {
      sequence + bytes_field(3, varint_field(3, 1) + varint_field(4, 1) + bytes_field(1, le32(5)) +
                                    bytes_field(2, le32(0))),  // top-k logprobs
      sequence + key(9, 3) + key(9, 4),                        // a group
      sequence + key(4, 2) + varint(0),                        // a known field in another wire type
      varint_field(4, static_cast<std::uint64_t>(-5)),         // a negative int32: ten bytes
      sequence.substr(0, sequence.size() - 1),                 // truncated
      key(0, 0) + varint(1),                                   // field number 0
  };
  for (const std::string& bytes : others) {
    SampleResponse plain;
    EXPECT_FALSE(decode_plain_sample(bytes, plain));
    EXPECT_EQ(plain, SampleResponse());
    expect_same_as_libprotobuf(bytes);
  }
}

TEST(ProtoSampleReader, FieldErrorsAreTheSame) {
  expect_same_as_libprotobuf(bytes_field(1, varint_field(1, 7)));                                   // stop reason
  expect_same_as_libprotobuf(bytes_field(1, varint_field(1, 1) + bytes_field(2, "abc")));           // tokens
  expect_same_as_libprotobuf(bytes_field(1, varint_field(1, 1)) + bytes_field(2, "abcde"));         // prompt logprobs
  expect_same_as_libprotobuf(bytes_field(1, varint_field(1, 9)) + bytes_field(1, "\x08\x01\x12"));  // malformed 2nd
}

TEST(ProtoSampleReader, MutatedMessagesDecodeAsLibprotobufDecodesThem) {
  std::mt19937 random(11);
  for (int i = 0; i < 2000; ++i) {
    std::string bytes = encode_sample(random_response(random));
    if (bytes.empty()) continue;
    const int edits = std::uniform_int_distribution<int>(1, 3)(random);
    for (int e = 0; e < edits && !bytes.empty(); ++e) {
      const std::size_t at = random() % bytes.size();
      switch (random() % 3) {
        case 0: bytes[at] = static_cast<char>(bytes[at] ^ (1 << (random() % 8))); break;
        case 1: bytes.resize(at); break;
        default: bytes.insert(at, 1, static_cast<char>(random() % 256)); break;
      }
    }
    expect_same_as_libprotobuf(bytes);
    if (::testing::Test::HasFailure()) {
      ADD_FAILURE() << "message " << i;
      return;
    }
  }
}

}  // namespace
}  // namespace tinker::wire::proto
