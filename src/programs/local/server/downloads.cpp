// GET /_downloads/<token>: checkpoint archives and trace exports, without authentication (the
// client sends no auth headers to the signed URL, doc/rest.md#checkpoint-downloads). A single byte
// range is honoured (206 + Content-Range, 416 when unsatisfiable) so interrupted downloads can
// resume.
#include "programs/local/server/frontend.hpp"
#include "programs/local/server/header_values.hpp"
#include "programs/local/server/http_dates.hpp"

namespace tinker::local::front {

void handle_download(Frontend& fe, Exchange& ex) {
  std::optional<Download> download;
  try {
    download = fe.engine.download(ex.route.token);
  } catch (const HttpError& e) {
    return ex.reply.error(e.status(), e.what());
  }
  if (!download || !download->data) return ex.reply.error(404, "Not Found");

  Reply& reply = ex.reply;
  reply.headers.emplace_back("Accept-Ranges", "bytes");
  reply.headers.emplace_back("Expires", http_date(download->expires));
  reply_with_range(reply, ex.header("Range"), download->data, download->content_type);
}

void reply_with_range(Reply& reply, std::string_view range_header, std::shared_ptr<const std::string> body,
                      std::string content_type) {
  const std::uint64_t size = body->size();
  const RangeRequest range = range_header.empty() ? RangeRequest() : parse_range(range_header, size);
  if (range.kind == RangeRequest::Kind::unsatisfiable) {
    reply.error(416, "requested range not satisfiable");
    reply.headers.emplace_back("Content-Range", "bytes */" + std::to_string(size));
    return;
  }
  reply.status = 200;
  reply.content_type = std::move(content_type);
  reply.shared_body = std::move(body);
  reply.shared_offset = 0;
  reply.shared_length = static_cast<std::size_t>(size);
  if (range.kind == RangeRequest::Kind::partial) {
    reply.status = 206;
    reply.shared_offset = static_cast<std::size_t>(range.first);
    reply.shared_length = static_cast<std::size_t>(range.last - range.first + 1);
    reply.headers.emplace_back("Content-Range", "bytes " + std::to_string(range.first) + "-" +
                                                    std::to_string(range.last) + "/" + std::to_string(size));
  }
}

}  // namespace tinker::local::front
