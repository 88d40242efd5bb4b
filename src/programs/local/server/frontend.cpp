#include "programs/local/server/frontend.hpp"

#include "core/wire/json_writer.hpp"
#include "programs/local/server/request_fields.hpp"

#include <boost/beast/http/field.hpp>

#include <openssl/rand.h>

#include <array>
#include <cassert>
#include <charconv>

namespace tinker::local::front {

void Reply::reset() {
  status = 200;
  content_type.clear();
  body.clear();
  headers.clear();
  shared_body.reset();
  shared_offset = 0;
  shared_length = 0;
}

void Reply::error(int status_code, std::string_view detail) {
  status = status_code;
  content_type.assign(kJson);
  body.assign("{\"detail\":");
  wire::append_json_string(body, detail);
  body += '}';
}

void Reply::json_text(std::string text, int status_code) {
  status = status_code;
  content_type.assign(kJson);
  body = std::move(text);
}

std::string_view Reply::body_view() const noexcept {
  if (shared_body) return std::string_view(*shared_body).substr(shared_offset, shared_length);
  return body;
}

std::int64_t RequestLog::append(RequestRecord record) {
  const std::int64_t index = first_index_ + static_cast<std::int64_t>(records_.size());
  record.index = index;
  records_.push_back(std::move(record));
  if (limit_ != 0 && records_.size() > limit_) {
    records_.pop_front();
    ++first_index_;
  }
  return index;
}

RequestRecord* RequestLog::find(std::int64_t index) {
  if (index < first_index_) return nullptr;
  const auto offset = static_cast<std::size_t>(index - first_index_);
  return offset < records_.size() ? &records_[offset] : nullptr;
}

std::vector<RequestRecord> RequestLog::snapshot() const {
  return {records_.begin(), records_.end()};
}

std::string_view Exchange::header(std::string_view name) const {
  assert(is_kept_request_field(name));  // the parser stores no other field
  const auto it = request.find(name);
  if (it == request.end()) return {};
  return it->value();
}

Frontend::Frontend(boost::asio::io_context& io, const ServerOptions& options_, const LocalTokenizers& tokenizers)
    : options(options_),
      logger(options_.log_level),
      engine(io.get_executor(), options_, tokenizers),
      authenticator(options_.api_keys, options_.jwt_lifetime),
      faults(options_.fault_seed, options_.faults),
      requests(options_.request_log_limit) {
  // Request ids differ across restarts: a random prefix, then a counter.
  std::array<unsigned char, 4> random{};
  RAND_bytes(random.data(), static_cast<int>(random.size()));
  static constexpr char kHex[] = "0123456789abcdef";
  request_id_prefix_ = "tl-";
  for (unsigned char byte : random) {
    request_id_prefix_ += kHex[byte >> 4];
    request_id_prefix_ += kHex[byte & 0xf];
  }
  request_id_prefix_ += '-';
  engine.set_queue_pause_hook([this](std::string_view endpoint) {
    std::optional<QueuePause> pause = faults.on_submit(endpoint);
    if (pause && pause_note != nullptr) *pause_note = "pause_queue";
    return pause;
  });
}

Frontend::~Frontend() = default;

const std::string& Frontend::next_request_id() {
  request_id_ = request_id_prefix_;
  char digits[24];
  const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, ++request_counter_);
  request_id_.append(digits, end);
  return request_id_;
}

AuditReport Frontend::audit() const {
  AuditReport report;
  report.models = engine.model_audit();
  report.requests = requests.snapshot();
  return report;
}

bool decode_body(Frontend& fe, Exchange& ex) {
  ex.body = ex.request.body();
  const std::string_view encoding = ex.header("Content-Encoding");
  if (encoding.empty() || iequals(encoding, "identity")) return true;
  if (!iequals(encoding, "zstd")) {
    ex.reply.error(415, "unsupported Content-Encoding \"" + std::string(encoding) + "\" (only zstd is accepted)");
    return false;
  }
  try {
    ex.decompressed = zstd_decompress(ex.body, fe.options.max_request_body);
  } catch (const error& e) {
    const std::string& message = e.diag().message.empty() ? std::string(e.what()) : e.diag().message;
    if (message.find("more than the limit") != std::string::npos) {
      ex.reply.error(413, "request body decompresses to more than the limit of " +
                              std::to_string(fe.options.max_request_body) + " bytes");
    } else {
      ex.reply.error(400, "Content-Encoding zstd: " + message);
    }
    return false;
  }
  ex.body = ex.decompressed;
  return true;
}

}  // namespace tinker::local::front
