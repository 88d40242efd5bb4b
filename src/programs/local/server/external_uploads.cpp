// The external-weights endpoints of tinker-local's front end (doc/local.md#external-weights): the
// signed URLs of an external checkpoint's files (served by /_downloads/<token>), the upload's start
// and finish, and the PUT of each uploaded file to /_uploads/<upload_id>/<file>. An upload URL is
// a capability like a download URL, but it is not enough alone: the PUT must also carry the header
// X-Tinker-Upload-Token the start answered (a request without it is refused with 403), the way a
// storage service's signed PUT can require headers. The token is never logged or echoed.
#include "programs/local/server/frontend.hpp"

namespace tinker::local::front {
namespace {

constexpr const char* kUploadTokenHeader = "X-Tinker-Upload-Token";

Timestamp whole_microseconds(std::chrono::system_clock::time_point t) {
  return std::chrono::floor<std::chrono::microseconds>(t);
}

void external_weights_urls(Frontend& fe, Exchange& ex) {
  const ExternalWeightsLocation location =
      fe.engine.external_weights_urls(ex.route.run_id, ex.route.checkpoint_id, ex.principal);
  ExternalWeightsUrlsResponse answer;
  for (const auto& [file, token] : location.tokens) {
    answer.urls[file] = fe.base_url + std::string(kDownloadsPrefix) + token;
  }
  answer.expires = whole_microseconds(location.expires);
  ex.reply.json(answer);
}

void upload_start(Frontend& fe, Exchange& ex) {
  ExternalWeightsUploadStartRequest request;
  if (!decode_json(ex, request)) return;
  const ExternalUploadStart start = fe.engine.external_upload_start(request, ex.principal);
  ExternalWeightsUploadStartResponse answer;
  answer.upload_id = start.upload_id;
  answer.expires = whole_microseconds(start.expires);
  for (const std::string& file : start.files) {
    answer.urls[file] = ExternalWeightsUploadUrl(
        fe.base_url + std::string(kUploadsPrefix) + start.upload_id + "/" + file, {{kUploadTokenHeader, start.secret}});
  }
  ex.reply.json(answer);
}

void upload_finish(Frontend& fe, Exchange& ex) {
  ExternalWeightsUploadFinishRequest request;
  if (!decode_json(ex, request)) return;
  ex.reply.json(fe.engine.external_upload_finish(request, ex.principal));
}

}  // namespace

void handle_external_weights_api(Frontend& fe, Exchange& ex) {
  switch (ex.route.endpoint) {
    case Endpoint::external_weights_urls: return external_weights_urls(fe, ex);
    case Endpoint::external_weights_upload_start: return upload_start(fe, ex);
    case Endpoint::external_weights_upload_finish: return upload_finish(fe, ex);
    default: return ex.reply.error(404, "Not Found");
  }
}

void handle_external_upload(Frontend& fe, Exchange& ex) {
  try {
    fe.engine.external_upload_put(ex.route.token, ex.route.file, ex.header(kUploadTokenHeader), std::string(ex.body));
    ex.reply.status = 200;
    ex.reply.content_type.clear();
    ex.reply.body.clear();
  } catch (const HttpError& e) {
    ex.reply.error(e.status(), e.what());
  }
}

}  // namespace tinker::local::front
