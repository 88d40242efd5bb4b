#include "core/wire/future_ticket.hpp"

#include "core/wire/plain_scanner.hpp"

#include <optional>

namespace tinker::wire {

bool read_plain_future_ticket(std::string_view text, UntypedAPIFuture& out) {
  plain::Scanner scan(text);
  std::optional<std::string_view> request_id;
  std::optional<std::string_view> model_id;
  if (!scan.take('{')) return false;
  do {
    std::string_view key;
    std::string_view value;
    if (!scan.plain_string(key) || !scan.take(':') || !scan.plain_string(value)) return false;
    if (key == "request_id" && !request_id) {
      request_id = value;
    } else if (key == "model_id" && !model_id) {
      model_id = value;
    } else {
      return false;
    }
  } while (scan.take(','));
  if (!scan.take('}') || !scan.at_end() || !request_id) return false;
  out.request_id.assign(request_id->data(), request_id->size());
  if (model_id) {
    out.model_id.emplace(model_id->data(), model_id->size());
  } else {
    out.model_id.reset();
  }
  return true;
}

}  // namespace tinker::wire
