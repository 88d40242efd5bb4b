/// \file
/// External-format (Hugging Face PEFT) weights: the export of a training client's adapter
/// (TrainingClient::async_save_weights_external), the signed URLs of its files
/// (RestClient::async_get_external_weights_urls) and the upload of such files
/// (RestClient::async_external_weights_upload_start / _finish); `doc/rest.md#external-weights`.
#pragma once

#include <tinker/types/common.hpp>
#include <tinker/types/training.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tinker {

/// Options of TrainingClient::async_save_weights_external.
class SaveWeightsExternalOptions {
 public:
  /// Shortest and longest lifetime the service documents: one hour and ten years (of 365 days).
  ///@{
  static constexpr std::int64_t min_ttl_seconds = 3600;
  static constexpr std::int64_t max_ttl_seconds = 10LL * 365 * 24 * 3600;
  ///@}

  /// Kept until deleted, unencrypted.
  SaveWeightsExternalOptions() = default;
  /// Expire after `ttl_seconds_` (3600 s .. 10 years).
  explicit SaveWeightsExternalOptions(std::optional<std::int64_t> ttl_seconds_) : ttl_seconds(ttl_seconds_) {}

  std::optional<std::int64_t> ttl_seconds;  ///< lifetime in seconds; empty: kept until deleted
  /// age recipients (`age1...` or SSH public keys) to encrypt every file to; empty: unencrypted.
  /// A given list must not be empty.
  std::optional<std::vector<std::string>> age_encryption_recipients;
};

/// Throws tinker::error (invalid_argument) naming the field when `name` is empty or `options`
/// are out of range (ttl_seconds outside 3600 s .. 10 years, an empty recipient list or recipient).
void check_save_weights_external_options(const std::string& name, const SaveWeightsExternalOptions& options);

/// POST /api/v1/save_weights_external (future; result SaveWeightsExternalResponse).
class SaveWeightsExternalRequest {
 public:
  /// An empty request.
  SaveWeightsExternalRequest() = default;
  /// Export `model_id_` as external checkpoint `name`, as its operation `seq_id_`.
  SaveWeightsExternalRequest(std::string model_id_, std::int64_t seq_id_, std::string name,
                             std::optional<std::int64_t> ttl_seconds_ = std::nullopt)
      : model_id(std::move(model_id_)), path(std::move(name)), seq_id(seq_id_), ttl_seconds(ttl_seconds_) {}

  std::string model_id;                     ///< the model
  std::string path;                         ///< the checkpoint *name*, e.g. "step-0100"
  std::optional<std::int64_t> seq_id;       ///< the model's operation number (always sent by the SDK)
  std::optional<std::int64_t> ttl_seconds;  ///< lifetime in seconds; absent = never expires
  /// age (filippo.io/age) recipients (`age1...` keys or SSH public keys): every exported file is
  /// encrypted to them and stored with a `.age` suffix. Absent = unencrypted.
  std::optional<std::vector<std::string>> age_encryption_recipients;

  /// Equal when every field is equal.
  friend bool operator==(const SaveWeightsExternalRequest&, const SaveWeightsExternalRequest&) = default;
};

/// Result of save_weights_external.
class SaveWeightsExternalResponse {
 public:
  /// An empty result.
  SaveWeightsExternalResponse() = default;
  /// An export saved at `path_`.
  explicit SaveWeightsExternalResponse(std::string path_) : path(std::move(path_)) {}

  std::string path;                        ///< `tinker://<model_id>/external_weights/<name>`
  std::optional<std::int64_t> size_bytes;  ///< the files' total size, when the server says

  /// Equal when every field is equal.
  friend bool operator==(const SaveWeightsExternalResponse&, const SaveWeightsExternalResponse&) = default;
};

/// GET .../checkpoints/external_weights/{name}/external_weights_urls: where to download each
/// file of an external checkpoint.
class ExternalWeightsUrlsResponse {
 public:
  /// An empty answer.
  ExternalWeightsUrlsResponse() = default;

  /// File path relative to the checkpoint's root ("adapter_config.json", "sub/x.safetensors")
  /// -> signed URL (a GET without credentials downloads it).
  std::map<std::string, std::string> urls;
  Timestamp expires{};  ///< when the URLs stop working

  /// Equal when every field is equal.
  friend bool operator==(const ExternalWeightsUrlsResponse&, const ExternalWeightsUrlsResponse&) = default;
};

/// POST /api/v1/external_weights_upload_start.
class ExternalWeightsUploadStartRequest {
 public:
  /// An empty request.
  ExternalWeightsUploadStartRequest() = default;
  /// An upload of an adapter for `base_model_` shaped as `lora_config_`.
  ExternalWeightsUploadStartRequest(std::string base_model_, LoraConfig lora_config_,
                                    std::optional<std::string> destination_project_id_ = std::nullopt)
      : base_model(std::move(base_model_)),
        lora_config(lora_config_),
        destination_project_id(std::move(destination_project_id_)) {}

  std::string base_model;                             ///< e.g. "Qwen/Qwen3-8B"
  LoraConfig lora_config;                             ///< the adapter's rank and layers
  std::optional<std::string> destination_project_id;  ///< the project it lands in; omitted when empty

  /// Equal when every field is equal.
  friend bool operator==(const ExternalWeightsUploadStartRequest&, const ExternalWeightsUploadStartRequest&) = default;
};

/// Where one file of an upload goes: an HTTP PUT of its bytes to `url`, sending `headers`.
/// Decoded from an object `{"url", "headers"}` or, as servers of the 0.39 protocol answer, from a
/// bare URL string (no headers).
class ExternalWeightsUploadUrl {
 public:
  /// An empty target.
  ExternalWeightsUploadUrl() = default;
  /// PUT to `url_` with `headers_`.
  explicit ExternalWeightsUploadUrl(std::string url_, std::map<std::string, std::string> headers_ = {})
      : url(std::move(url_)), headers(std::move(headers_)) {}

  std::string url;                             ///< signed URL, any origin
  std::map<std::string, std::string> headers;  ///< header lines the PUT must carry

  /// Equal when every field is equal.
  friend bool operator==(const ExternalWeightsUploadUrl&, const ExternalWeightsUploadUrl&) = default;
};

/// Answer of external_weights_upload_start.
class ExternalWeightsUploadStartResponse {
 public:
  /// An empty answer.
  ExternalWeightsUploadStartResponse() = default;

  std::string upload_id;                                 ///< what finish takes
  std::map<std::string, ExternalWeightsUploadUrl> urls;  ///< file name -> where to PUT it
  Timestamp expires{};                                   ///< when the URLs stop working

  /// Equal when every field is equal.
  friend bool operator==(const ExternalWeightsUploadStartResponse&,
                         const ExternalWeightsUploadStartResponse&) = default;
};

/// POST /api/v1/external_weights_upload_finish.
class ExternalWeightsUploadFinishRequest {
 public:
  /// An empty request.
  ExternalWeightsUploadFinishRequest() = default;
  /// Finish upload `upload_id_`.
  explicit ExternalWeightsUploadFinishRequest(std::string upload_id_) : upload_id(std::move(upload_id_)) {}

  std::string upload_id;  ///< from the start's answer

  /// Equal when every field is equal.
  friend bool operator==(const ExternalWeightsUploadFinishRequest&,
                         const ExternalWeightsUploadFinishRequest&) = default;
};

/// Answer of external_weights_upload_finish.
class ExternalWeightsUploadFinishResponse {
 public:
  /// An empty answer.
  ExternalWeightsUploadFinishResponse() = default;
  /// The checkpoint registered at `tinker_path_`.
  explicit ExternalWeightsUploadFinishResponse(std::string tinker_path_) : tinker_path(std::move(tinker_path_)) {}

  std::string tinker_path;  ///< `tinker://<run>/external_weights/<name>` of the uploaded checkpoint

  /// Equal when every field is equal.
  friend bool operator==(const ExternalWeightsUploadFinishResponse&,
                         const ExternalWeightsUploadFinishResponse&) = default;
};

TINKER_DECLARE_PRINTABLE(SaveWeightsExternalRequest);
TINKER_DECLARE_PRINTABLE(SaveWeightsExternalResponse);
TINKER_DECLARE_PRINTABLE(ExternalWeightsUrlsResponse);
TINKER_DECLARE_PRINTABLE(ExternalWeightsUploadStartRequest);
TINKER_DECLARE_PRINTABLE(ExternalWeightsUploadUrl);
TINKER_DECLARE_PRINTABLE(ExternalWeightsUploadStartResponse);
TINKER_DECLARE_PRINTABLE(ExternalWeightsUploadFinishRequest);
TINKER_DECLARE_PRINTABLE(ExternalWeightsUploadFinishResponse);

}  // namespace tinker
