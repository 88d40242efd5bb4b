/// \file
/// Options of the external-weights transfers of the RestClient (`doc/rest.md#external-weights`):
/// the PUT of one file to an upload URL, and the whole upload of a PEFT adapter directory.
#pragma once

#include <tinker/types/external_weights.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

namespace tinker {

/// Options of RestClient::async_external_weights_upload_put: how one file's PUT is retried.
class ExternalWeightsPutOptions {
 public:
  /// The client's retry settings (ClientOptions::retry).
  ExternalWeightsPutOptions() = default;

  /// PUTs re-sent after a dropped connection or an answer 408, 429 or 5xx (each re-sends the
  /// whole file, after the transport retry delays of ClientOptions::retry). Empty: the client's
  /// `retry.max_retries`. Any other answer fails at once.
  std::optional<int> max_retries;
};

/// Options of RestClient::async_upload_external_weights.
class ExternalWeightsUploadOptions {
 public:
  /// Into the caller's default project, the client's retry settings.
  ExternalWeightsUploadOptions() = default;

  std::optional<std::string> destination_project_id;  ///< the project the checkpoint lands in
  /// Retries of each PUT, as ExternalWeightsPutOptions::max_retries.
  std::optional<int> max_put_retries;
  /// Called on the client's io thread before each file's PUT (its name as the server asked for it).
  std::function<void(const std::string& file)> on_file;
};

}  // namespace tinker
