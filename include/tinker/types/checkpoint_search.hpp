/// \file
/// Searching checkpoints, copying weights and checkpoint storage usage (`doc/rest.md#search-checkpoints`,
/// `doc/rest.md#checkpoint-storage-usage`, `doc/service.md#copying-weights`).
#pragma once

#include <tinker/types/checkpoint.hpp>
#include <tinker/types/common.hpp>
#include <tinker/types/search.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tinker {

/// Where the next page of a checkpoint search starts: pass it back unchanged.
class CheckpointSearchCursor {
 public:
  /// An empty cursor.
  CheckpointSearchCursor() = default;
  /// The page after the checkpoint `last_checkpoint_uuid_` created at `last_created_at_`.
  CheckpointSearchCursor(Timestamp last_created_at_, std::string last_checkpoint_uuid_)
      : last_created_at(last_created_at_), last_checkpoint_uuid(std::move(last_checkpoint_uuid_)) {}

  Timestamp last_created_at{};       ///< creation time of the last checkpoint returned
  std::string last_checkpoint_uuid;  ///< the server's id of the last checkpoint returned

  /// Equal when every field is equal.
  friend bool operator==(const CheckpointSearchCursor&, const CheckpointSearchCursor&) = default;
};

/// The body of a checkpoint search: every given filter must hold.
class CheckpointSearchRequest {
 public:
  /// The caller's own checkpoints, 50 a page.
  CheckpointSearchRequest() = default;

  /// Projects to search; empty = every project the caller may list (naming one it may not is an error).
  std::optional<std::vector<std::string>> project_ids;
  /// Exact string pairs that must all be in the checkpoint's user_metadata (always sent, `{}` = any).
  std::map<std::string, std::string> user_metadata;
  std::optional<CheckpointType> checkpoint_type;  ///< only checkpoints of this type; empty = every type
  SearchOwner owner;                              ///< whose checkpoints (default: the caller's own)
  /// Only checkpoints of these base models; empty optional = any model, an empty list matches nothing.
  std::optional<std::vector<std::string>> base_models;
  std::int64_t limit = 50;                       ///< most checkpoints a page holds, 1..200
  std::optional<CheckpointSearchCursor> cursor;  ///< the previous page's next_cursor; empty = the first page

  /// Equal when every field is equal.
  friend bool operator==(const CheckpointSearchRequest&, const CheckpointSearchRequest&) = default;
};

/// One page of a checkpoint search, newest first.
class CheckpointSearchResponse {
 public:
  /// An empty last page.
  CheckpointSearchResponse() = default;
  /// The page `checkpoints_`, followed by the page at `next_cursor_` when given.
  explicit CheckpointSearchResponse(std::vector<Checkpoint> checkpoints_,
                                    std::optional<CheckpointSearchCursor> next_cursor_ = std::nullopt)
      : checkpoints(std::move(checkpoints_)), next_cursor(std::move(next_cursor_)) {}

  std::vector<Checkpoint> checkpoints;                ///< this page, newest first
  std::optional<CheckpointSearchCursor> next_cursor;  ///< empty on the last page

  /// Equal when every field is equal.
  friend bool operator==(const CheckpointSearchResponse&, const CheckpointSearchResponse&) = default;
};

/// Options of ServiceClient::async_copy_weights.
class CopyWeightsOptions {
 public:
  /// The copy never expires; the source is one of the caller's own checkpoints.
  CopyWeightsOptions() = default;
  /// The copy expires after `ttl_seconds_` (3600 s .. 10 years); `weights_access_token_` reads
  /// another user's checkpoint.
  explicit CopyWeightsOptions(std::optional<std::int64_t> ttl_seconds_,
                              std::optional<std::string> weights_access_token_ = std::nullopt)
      : ttl_seconds(ttl_seconds_), weights_access_token(std::move(weights_access_token_)) {}

  std::optional<std::int64_t> ttl_seconds;          ///< the copy's lifetime; the source's expiry is not inherited
  std::optional<std::string> weights_access_token;  ///< grants read access to someone else's weights

  /// Equal when every field is equal.
  friend bool operator==(const CopyWeightsOptions&, const CopyWeightsOptions&) = default;
};

/// The body of POST /api/v1/copy_weights.
class CopyWeightsRequest {
 public:
  /// An empty request.
  CopyWeightsRequest() = default;
  /// Copy `source_path_` into a new run, the session's training client number `model_seq_id_`.
  CopyWeightsRequest(std::string session_id_, std::int64_t model_seq_id_, std::string source_path_)
      : session_id(std::move(session_id_)), model_seq_id(model_seq_id_), source_path(std::move(source_path_)) {}

  std::string session_id;                           ///< the copying session
  std::int64_t model_seq_id = 0;                    ///< from the session's training-client counter
  std::string source_path;                          ///< the `tinker://` path copied
  std::optional<std::int64_t> ttl_seconds;          ///< the copy's lifetime; omitted = never expires
  std::optional<std::string> weights_access_token;  ///< omitted when not given

  /// Equal when every field is equal.
  friend bool operator==(const CopyWeightsRequest&, const CopyWeightsRequest&) = default;
};

/// The answer of POST /api/v1/copy_weights.
class CopyWeightsResponse {
 public:
  /// An empty answer.
  CopyWeightsResponse() = default;
  /// The copy is at `tinker_path_`.
  explicit CopyWeightsResponse(std::string tinker_path_) : tinker_path(std::move(tinker_path_)) {}

  std::string tinker_path;  ///< the copy's `tinker://` path, in a new run of the caller's project

  /// Equal when every field is equal.
  friend bool operator==(const CopyWeightsResponse&, const CopyWeightsResponse&) = default;
};

/// One row of the checkpoint storage usage: a project, a user or both.
class CheckpointStorageUsageItem {
 public:
  /// An empty row.
  CheckpointStorageUsageItem() = default;

  std::optional<std::string> project_id;    ///< the project, when the row is per project
  std::optional<std::string> org_user_urn;  ///< the user, when the row is per user
  std::optional<std::string> user_email;    ///< the user's email, when known
  std::optional<std::string> user_name;     ///< the user's name, when known
  std::int64_t checkpoint_count = 0;        ///< checkpoints stored
  std::int64_t size_bytes = 0;              ///< their size
  double size_gigabytes = 0.0;              ///< the same size in GB (10^9 bytes)
  /// Projected gross cost of keeping them for a month (720 h), when the server knows a rate.
  std::optional<double> estimated_monthly_cost_usd;

  /// Equal when every field is equal.
  friend bool operator==(const CheckpointStorageUsageItem&, const CheckpointStorageUsageItem&) = default;
};

/// GET /api/v1/billing/usage/checkpoints/current: what is stored now (may lag by 1-2 h).
class CheckpointStorageUsageResponse {
 public:
  /// No rows.
  CheckpointStorageUsageResponse() = default;

  std::optional<double> effective_rate_usd_per_gigabyte_month;  ///< the rate applied, when known
  std::vector<CheckpointStorageUsageItem> data;                 ///< one row per project/user

  /// Equal when every field is equal.
  friend bool operator==(const CheckpointStorageUsageResponse&, const CheckpointStorageUsageResponse&) = default;
};

TINKER_DECLARE_PRINTABLE(CheckpointSearchCursor);
TINKER_DECLARE_PRINTABLE(CheckpointSearchRequest);
TINKER_DECLARE_PRINTABLE(CheckpointSearchResponse);
TINKER_DECLARE_PRINTABLE(CopyWeightsRequest);
TINKER_DECLARE_PRINTABLE(CopyWeightsResponse);
TINKER_DECLARE_PRINTABLE(CheckpointStorageUsageItem);
TINKER_DECLARE_PRINTABLE(CheckpointStorageUsageResponse);

}  // namespace tinker
