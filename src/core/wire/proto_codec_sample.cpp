// SampleResponse <-> tinker_public.SampleResponse (doc/protocol.md#protobuf).
#include "core/wire/proto_codec_internal.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>

namespace tinker::wire::proto {
namespace {

using google::protobuf::Arena;

// The sentinel (token 0, logprob -99999) that marks an empty top-k cell. A row is null iff its first cell is empty;
// otherwise empty cells may only pad its end.
constexpr TokenId kSentinelToken = 0;
constexpr float kSentinelLogprob = -99999.0F;

bool is_sentinel(TokenId token, float logprob) {
  return token == kSentinelToken && logprob == kSentinelLogprob;
}

pb::StopReason wire_stop_reason(StopReason reason) {
  return reason == StopReason::stop ? pb::STOP_REASON_STOP : pb::STOP_REASON_LENGTH;
}

void encode_sequence(const SampledSequence& sequence, pb::SampledSequence* out) {
  out->set_stop_reason(wire_stop_reason(sequence.stop_reason));
  assign_le(out->mutable_tokens(), std::span(sequence.tokens));
  if (sequence.logprobs) assign_le(out->mutable_logprobs(), std::span(*sequence.logprobs));
  if (sequence.sequence_id) out->set_sequence_id(*sequence.sequence_id);
}

void encode_prompt_logprobs(const std::vector<std::optional<float>>& logprobs, std::string* out) {
  std::vector<float> values(logprobs.size());
  for (std::size_t i = 0; i < logprobs.size(); ++i) {
    values[i] = logprobs[i].value_or(std::numeric_limits<float>::quiet_NaN());
  }
  assign_le(out, std::span<const float>(values));
}

// N x K matrix with K = the longest row; null rows and row ends are sentinel cells. An empty
// (non-null) row therefore reads back as null, and a matrix without any entry keeps one column
// so its rows survive as nulls.
void encode_topk(const std::vector<std::optional<std::vector<TopkEntry>>>& rows, pb::TopkPromptLogprobs* out) {
  std::size_t k = rows.empty() ? 0 : 1;
  for (const auto& row : rows) {
    if (row) k = std::max(k, row->size());
  }
  if (k > std::numeric_limits<std::uint32_t>::max() || rows.size() > std::numeric_limits<std::uint32_t>::max()) {
    encode_fail(Path("topk_prompt_logprobs"), "matrix too large for the protobuf form");
  }
  std::vector<TokenId> ids(rows.size() * k, kSentinelToken);
  std::vector<float> logprobs(rows.size() * k, kSentinelLogprob);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (!rows[i]) continue;
    for (std::size_t j = 0; j < rows[i]->size(); ++j) {
      ids[i * k + j] = (*rows[i])[j].first;
      logprobs[i * k + j] = (*rows[i])[j].second;
    }
  }
  assign_le(out->mutable_token_ids(), std::span<const TokenId>(ids));
  assign_le(out->mutable_logprobs(), std::span<const float>(logprobs));
  out->set_k(static_cast<std::uint32_t>(k));
  out->set_prompt_length(static_cast<std::uint32_t>(rows.size()));
}

// ---- decode --------------------------------------------------------------------------------

std::vector<std::optional<std::vector<TopkEntry>>> decode_topk(const pb::TopkPromptLogprobs& topk) {
  const Path path("topk_prompt_logprobs");
  const std::uint64_t n = topk.prompt_length();
  const std::uint64_t k = topk.k();
  // n * k < 2^64 cannot overflow; compare in cells so that nothing is allocated for bogus sizes.
  const std::uint64_t cells = n * k;
  const auto check = [&](const std::string& bytes, std::string_view name) {
    if (bytes.size() % 4 != 0 || bytes.size() / 4 != cells) {
      decode_fail(path.child(name), std::to_string(bytes.size()) + " bytes, expected prompt_length * k = " +
                                        std::to_string(cells) + " cells of 4 bytes");
    }
  };
  check(topk.token_ids(), "token_ids");
  check(topk.logprobs(), "logprobs");
  const std::vector<TokenId> ids = read_le<TokenId>(topk.token_ids(), path.child("token_ids"));
  const std::vector<float> logprobs = read_le<float>(topk.logprobs(), path.child("logprobs"));

  std::vector<std::optional<std::vector<TopkEntry>>> rows(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t row = i * k;
    if (is_sentinel(ids[row], logprobs[row])) continue;  // null row; the rest is not inspected
    std::size_t used = k;
    while (used > 1 && is_sentinel(ids[row + used - 1], logprobs[row + used - 1])) --used;
    auto& entries = rows[i].emplace();
    entries.reserve(used);
    for (std::size_t j = 0; j < used; ++j) entries.emplace_back(ids[row + j], logprobs[row + j]);
  }
  return rows;
}

}  // namespace

SampledSequence decode_sequence(int stop_reason, std::string_view tokens, std::string_view logprobs, const Path& path) {
  SampledSequence out;
  switch (stop_reason) {
    case pb::STOP_REASON_STOP: out.stop_reason = StopReason::stop; break;
    case pb::STOP_REASON_LENGTH: out.stop_reason = StopReason::length; break;
    default: decode_fail(path.child("stop_reason"), "unknown stop reason " + std::to_string(stop_reason));
  }
  out.tokens = read_le<TokenId>(tokens, path.child("tokens"));
  if (!logprobs.empty()) out.logprobs = read_le<float>(logprobs, path.child("logprobs"));
  return out;
}

std::vector<std::optional<float>> decode_prompt_logprobs(std::string_view bytes) {
  const std::vector<float> values = read_le<float>(bytes, Path("prompt_logprobs"));
  std::vector<std::optional<float>> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!std::isnan(values[i])) out[i] = values[i];
  }
  return out;
}

std::string encode_sample(const SampleResponse& response) {
  Arena arena(arena_options());
  auto* msg = Arena::CreateMessage<pb::SampleResponse>(&arena);
  msg->mutable_sequences()->Reserve(static_cast<int>(response.sequences.size()));
  for (const SampledSequence& sequence : response.sequences) encode_sequence(sequence, msg->add_sequences());
  if (response.prompt_logprobs) encode_prompt_logprobs(*response.prompt_logprobs, msg->mutable_prompt_logprobs());
  if (response.topk_prompt_logprobs) encode_topk(*response.topk_prompt_logprobs, msg->mutable_topk_prompt_logprobs());
  msg->set_prompt_cache_hit_tokens(to_int32(response.prompt_cache_hit_tokens, Path("prompt_cache_hit_tokens")));
  return serialize(*msg, "SampleResponse");
}

SampleResponse decode_sample_with_libprotobuf(std::string_view bytes) {
  // A sample result is usually small: its message starts in a block on the stack, and only a
  // large one makes the arena take blocks from the heap (a 16 KiB first block cost more than
  // the decoding: a large malloc consolidates the allocator's fast bins).
  alignas(std::max_align_t) char first_block[4096];
  google::protobuf::ArenaOptions options = arena_options();
  options.initial_block = first_block;
  options.initial_block_size = sizeof(first_block);
  Arena arena(options);
  auto* msg = Arena::CreateMessage<pb::SampleResponse>(&arena);
  parse(*msg, bytes, "SampleResponse");

  SampleResponse out;
  out.sequences.reserve(static_cast<std::size_t>(msg->sequences_size()));
  for (int i = 0; i < msg->sequences_size(); ++i) {
    const pb::SampledSequence& sequence = msg->sequences(i);
    out.sequences.push_back(decode_sequence(static_cast<int>(sequence.stop_reason()), sequence.tokens(),
                                            sequence.logprobs(), Path("sequences", i)));
    if (sequence.has_sequence_id()) out.sequences.back().sequence_id = sequence.sequence_id();
  }
  // Empty bytes mean "not requested", exactly like an absent field.
  if (!msg->prompt_logprobs().empty()) out.prompt_logprobs = decode_prompt_logprobs(msg->prompt_logprobs());
  if (msg->has_topk_prompt_logprobs()) {
    const pb::TopkPromptLogprobs& topk = msg->topk_prompt_logprobs();
    if (topk.prompt_length() > 0 && topk.k() > 0) out.topk_prompt_logprobs = decode_topk(topk);
  }
  out.prompt_cache_hit_tokens = msg->prompt_cache_hit_tokens();
  return out;
}

SampleResponse decode_sample(std::string_view bytes) {
  SampleResponse out;
  if (decode_plain_sample(bytes, out)) return out;
  return decode_sample_with_libprotobuf(bytes);
}

}  // namespace tinker::wire::proto
