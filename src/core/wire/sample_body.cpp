#include "core/wire/sample_body.hpp"

#include "core/wire/json_writer.hpp"

#include <tinker/codec.hpp>

#include <charconv>
#include <cmath>
#include <cstring>
#include <variant>

namespace tinker::wire {
namespace {

// Writes into a stack buffer: a literal is a constant-size copy and a number a to_chars, with no
// capacity check per piece. `room` bounds what is written between two flushes: at most about 300
// bytes here (the sampling parameters and the fields after the session id, every number at its
// longest: 20 characters for an integer, 24 for a double).
class Cursor {
 public:
  static constexpr std::size_t room = 512;

  template <std::size_t N>
  void put(const char (&literal)[N]) {
    std::memcpy(end_, literal, N - 1);
    end_ += N - 1;
  }
  void put(char c) { *end_++ = c; }
  void integer(std::int64_t value) { end_ = std::to_chars(end_, buffer_ + room, value).ptr; }
  void integer(std::uint64_t value) { end_ = std::to_chars(end_, buffer_ + room, value).ptr; }
  // As JsonWriter::number: the shortest round-trip form, negative zero as -0.0. A whole number
  // below 10^5 (temperature 1, top_p 1) is its digits: to_chars(double) picks the fixed form
  // while it is no longer than the scientific one, and the integer path costs a fraction.
  void number(double value) {
    if (value == std::trunc(value) && std::fabs(value) < 1e5 && !(value == 0 && std::signbit(value))) {
      return integer(static_cast<std::int64_t>(value));
    }
    end_ = std::to_chars(end_, buffer_ + room, value).ptr;
    if (value == 0 && std::signbit(value)) put(".0");
  }
  void flush_to(std::string& out) {
    out.append(buffer_, end_);
    end_ = buffer_;
  }

 private:
  char buffer_[room];
  char* end_ = buffer_;
};

bool written_directly(const SampleRequest& request) {
  const SamplingParams& params = request.sampling_params;
  if (request.base_model || request.model_path || params.stop) return false;
  if (!std::isfinite(params.temperature) || !std::isfinite(params.top_p)) return false;  // append_json's error
  if (request.sampling_session_id && !is_valid_utf8(*request.sampling_session_id)) return false;
  for (const ModelInputChunk& chunk : request.prompt.chunks) {
    if (!std::holds_alternative<EncodedTextChunk>(chunk)) return false;
  }
  return true;
}

void write_params(const SamplingParams& params, Cursor& cursor) {
  cursor.put(R"(,"sampling_params":{)");
  if (params.max_tokens) {
    cursor.put(R"("max_tokens":)");
    cursor.integer(*params.max_tokens);
    cursor.put(',');
  }
  if (params.seed) {
    cursor.put(R"("seed":)");
    cursor.integer(*params.seed);
    cursor.put(',');
  }
  cursor.put(R"("temperature":)");
  cursor.number(params.temperature);
  cursor.put(R"(,"top_k":)");
  cursor.integer(params.top_k);
  cursor.put(R"(,"top_p":)");
  cursor.number(params.top_p);
  cursor.put('}');
}

}  // namespace

void append_sample_body(const SampleRequest& request, std::string& out) {
  if (!written_directly(request)) return append_json(request, out);
  Cursor cursor;
  cursor.put(R"({"num_samples":)");
  cursor.integer(request.num_samples);
  cursor.put(R"(,"prompt":{"chunks":[)");
  cursor.flush_to(out);
  bool first = true;
  for (const ModelInputChunk& chunk : request.prompt.chunks) {
    out.append(first ? R"({"tokens":)" : R"(,{"tokens":)");
    first = false;
    JsonWriter(out).int_array(std::get<EncodedTextChunk>(chunk).tokens);
    out.append(R"(,"type":"encoded_text"})");
  }
  cursor.put("]}");
  write_params(request.sampling_params, cursor);
  if (request.sampling_session_id) {
    cursor.put(R"(,"sampling_session_id":)");
    cursor.flush_to(out);
    append_json_string(out, *request.sampling_session_id);
  }
  if (request.seq_id) {
    cursor.put(R"(,"seq_id":)");
    cursor.integer(*request.seq_id);
  }
  if (request.prompt_logprobs) {
    if (*request.prompt_logprobs) {
      cursor.put(R"(,"prompt_logprobs":true)");
    } else {
      cursor.put(R"(,"prompt_logprobs":false)");
    }
  }
  cursor.put(R"(,"topk_prompt_logprobs":)");
  cursor.integer(request.topk_prompt_logprobs);
  if (request.record_stability_info) {
    if (*request.record_stability_info) {
      cursor.put(R"(,"record_stability_info":true)");
    } else {
      cursor.put(R"(,"record_stability_info":false)");
    }
  }
  cursor.put(R"(,"type":"sample"})");
  cursor.flush_to(out);
}

}  // namespace tinker::wire
