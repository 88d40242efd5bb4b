// JSON codec of the external-weights types (include/tinker/types/external_weights.hpp,
// doc/rest.md#external-weights): the export, its signed URLs, and the upload's start and finish.
#include "core/wire/json_api.hpp"
#include "core/wire/json_reader.hpp"

namespace tinker {

namespace wire {

// An upload target: {"url", "headers"} (0.40), or a bare URL string (0.39), read as no headers.
void write_json(JsonEncoder& e, const ExternalWeightsUploadUrl& value) {
  e.writer().begin_object();
  e.req("url", value.url);
  e.req("headers", value.headers);
  e.writer().end_object();
}

void read_json(const boost::json::value& v, const Path& p, ExternalWeightsUploadUrl& out) {
  out = ExternalWeightsUploadUrl();
  if (v.is_string()) return read_json(v, p, out.url);
  if (!v.is_object()) fail_type(p, "URL string or {\"url\", \"headers\"} object", v);
  JsonDecoder decoder(v.get_object(), p);
  decoder.req("url", out.url);
  decoder.opt("headers", out.headers);
}

}  // namespace wire

template <class V>
void wire_fields(V& v, SaveWeightsExternalRequest& x) {
  v.req("model_id", x.model_id);
  v.req("path", x.path);
  v.opt("seq_id", x.seq_id);
  v.opt("ttl_seconds", x.ttl_seconds);
  v.opt("age_encryption_recipients", x.age_encryption_recipients);
  v.tag("type", "save_weights_external");
}

template <class V>
void wire_fields(V& v, SaveWeightsExternalResponse& x) {
  v.req("path", x.path);
  v.opt("size_bytes", x.size_bytes);
  v.tag("type", "save_weights_external");
}

template <class V>
void wire_fields(V& v, ExternalWeightsUrlsResponse& x) {
  v.req("urls", x.urls);
  v.req("expires", x.expires);
}

template <class V>
void wire_fields(V& v, ExternalWeightsUploadStartRequest& x) {
  v.req("base_model", x.base_model);
  v.req("lora_config", x.lora_config);
  v.opt("destination_project_id", x.destination_project_id);
}

template <class V>
void wire_fields(V& v, ExternalWeightsUploadStartResponse& x) {
  v.req("upload_id", x.upload_id);
  v.req("urls", x.urls);
  v.req("expires", x.expires);
}

template <class V>
void wire_fields(V& v, ExternalWeightsUploadFinishRequest& x) {
  v.req("upload_id", x.upload_id);
}

template <class V>
void wire_fields(V& v, ExternalWeightsUploadFinishResponse& x) {
  v.req("tinker_path", x.tinker_path);
}

TINKER_INSTANTIATE_JSON(SaveWeightsExternalRequest);
TINKER_INSTANTIATE_JSON(SaveWeightsExternalResponse);
TINKER_INSTANTIATE_JSON(ExternalWeightsUrlsResponse);
TINKER_INSTANTIATE_JSON(ExternalWeightsUploadStartRequest);
TINKER_INSTANTIATE_JSON(ExternalWeightsUploadUrl);
TINKER_INSTANTIATE_JSON(ExternalWeightsUploadStartResponse);
TINKER_INSTANTIATE_JSON(ExternalWeightsUploadFinishRequest);
TINKER_INSTANTIATE_JSON(ExternalWeightsUploadFinishResponse);

}  // namespace tinker
