#include "core/wire/completions_reader.hpp"

#include "core/wire/plain_scanner.hpp"

#include <tinker/codec.hpp>

namespace tinker::wire {
namespace {

bool read_completion(plain::Scanner& scan, PlainCompletion& out) {
  bool has_state = false;
  bool has_request_id = false;
  bool has_size = false;
  if (!scan.take('{')) return false;
  do {
    std::string_view key;
    if (!scan.plain_string(key) || !scan.take(':')) return false;
    if (key == "state" && !has_state) {
      has_state = scan.plain_string(out.state);
      if (!has_state) return false;
    } else if (key == "request_id" && !has_request_id) {
      has_request_id = scan.plain_string(out.request_id);
      if (!has_request_id) return false;
    } else if (key == "response_payload_uncompressed_size" && !has_size) {
      std::int64_t size = 0;
      has_size = scan.literal("null") || scan.natural(size);
      if (!has_size) return false;
    } else {
      return false;
    }
  } while (scan.take(','));
  return scan.take('}') && has_state;
}

bool read_completion_array(plain::Scanner& scan, std::vector<PlainCompletion>& completions) {
  if (!scan.take('[')) return false;
  if (scan.take(']')) return true;
  do {
    if (!read_completion(scan, completions.emplace_back())) return false;
  } while (scan.take(','));
  return scan.take(']');
}

}  // namespace

bool read_plain_completions(std::string_view text, std::vector<PlainCompletion>& completions, std::int64_t& cursor) {
  plain::Scanner scan(text);
  completions.clear();
  bool has_completions = false;
  bool has_cursor = false;
  if (!scan.take('{')) return false;
  do {
    std::string_view key;
    if (!scan.plain_string(key) || !scan.take(':')) return false;
    if (key == "completions" && !has_completions) {
      has_completions = read_completion_array(scan, completions);
      if (!has_completions) return false;
    } else if (key == "cursor" && !has_cursor) {
      has_cursor = scan.natural(cursor);
      if (!has_cursor) return false;
    } else {
      return false;
    }
  } while (scan.take(','));
  return scan.take('}') && scan.at_end() && has_completions && has_cursor;
}

bool read_completions(std::string_view text, std::vector<PlainCompletion>& completions, std::int64_t& cursor,
                      FuturesRetrieveResponse& decoded) {
  if (read_plain_completions(text, completions, cursor)) return true;
  diagnostics diag;
  if (from_json(text, decoded, diag)) return false;
  completions.clear();
  for (const FutureCompletion& completion : decoded.completions) {
    completions.push_back(PlainCompletion{completion.state, completion.request_id});
  }
  cursor = decoded.cursor;
  return true;
}

}  // namespace tinker::wire
