/// \file
/// The stored credentials of the command line, `~/.tinker/credentials.json`
/// (`doc/service.md#stored-credentials`), in the Python SDK's format:
///
///     {"version": 1, "default": "<key id>" | null,
///      "keys": {"<key id>": {"type": "manual", "key": "tml-...", "name": "...", "note": "...",
///                            "details": {"org_details": {"name": "..."}, "user_details": {"email": "..."}}}}}
///
/// `tinker auth login` writes it; `ClientOptions::from_environment` uses its default key as the
/// lowest-priority credential (TINKER_API_KEY, then TINKER_CREDENTIAL_CMD, then this file).
/// The file is written with mode 0600 (in a directory created with mode 0700), through a temporary file in the
/// same directory that is synced and renamed over the old one, so a reader sees the old file or
/// the new one, never a part. Records of a type this SDK does not know, and members it does not
/// know, are kept when the file is rewritten. Errors name the file and what is wrong with it,
/// never its content (it holds keys).
#pragma once

#include <tinker/config.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tinker {

/// Who a stored key belongs to (the record's optional `details`).
class CredentialDetails {
 public:
  /// No details.
  CredentialDetails() = default;

  std::optional<std::string> org_name;    ///< `org_details.name`
  std::optional<std::string> user_email;  ///< `user_details.email`

  /// Equal when every field is equal.
  friend bool operator==(const CredentialDetails&, const CredentialDetails&) = default;
};

/// One record of the credentials file's `keys`.
class StoredCredential {
 public:
  /// An empty record.
  StoredCredential() = default;
  /// A "manual" record (a key the user entered) with id `id_`, `key_` and display name `name_`.
  StoredCredential(std::string id_, Secret key_, std::string name_)
      : id(std::move(id_)), key(std::move(key_)), name(std::move(name_)) {}

  /// The record's id: its member name in `keys`, what `default` names. Not secret.
  std::string id;
  /// "manual" (entered by the user), "generated" (minted by a browser login of an older CLI), or a
  /// type this SDK does not know, kept as read.
  std::string type = "manual";
  /// The API key; empty when the record has none (a type this SDK does not know).
  Secret key;
  /// The display name (`name`).
  std::string name;
  /// A free-form note (`note`), manual records only.
  std::optional<std::string> note;
  /// Who the key belongs to (`details`).
  std::optional<CredentialDetails> details;
  /// The record as read (JSON text; it holds the key, hence a Secret): saving starts from it and
  /// sets the fields above on top, so members this SDK does not know survive. Empty for a new record.
  Secret raw_record;
};

/// The content of a credentials file.
class CredentialStore {
 public:
  /// No keys, no default.
  CredentialStore() = default;

  /// The file's place: `$HOME/.tinker/credentials.json`, with HOME read through `env` (an empty
  /// value counts as unset). nullopt when HOME is not set.
  static std::optional<std::filesystem::path> default_path(const ClientOptions::EnvLookup& env);

  /// Reads `path`. A file that does not exist is an empty store. Throws tinker::error:
  /// errc::io_error when it exists but cannot be read, errc::invalid_file when it is not a
  /// credentials file of version 1 (not JSON, a record without a string `type`, a manual or
  /// generated record without a string `key`, a `default` naming no record, ...). Each names
  /// `path` and the item, never a key or any other text of the file.
  static CredentialStore load(const std::filesystem::path& path);

  /// Writes the store to `path` atomically: a missing directory is created with mode 0700 (an
  /// existing one is left as it is), the content goes to a new temporary file of mode 0600
  /// beside `path`, is synced and renamed over `path`. Throws tinker::error (errc::io_error) naming the
  /// file and the system's reason; `path` is then unchanged and no temporary file is left.
  void save(const std::filesystem::path& path) const;

  /// The record with id `key_id`, or null.
  const StoredCredential* find(std::string_view key_id) const noexcept;
  /// The record `default` names, or null when there is no default.
  const StoredCredential* default_credential() const noexcept;
  /// Adds `credential`, replacing a record with the same id, and makes it the default when
  /// `make_default`.
  void put(StoredCredential credential, bool make_default);
  /// Removes the record `key_id` (and the default, if it named it). False when there was none.
  bool remove(std::string_view key_id);

  /// The record `default` names (`"default"`), or nullopt (`null`).
  std::optional<std::string> default_id;
  /// The records of `keys`, in the file's order.
  std::vector<StoredCredential> keys;
};

/// Where a client's credential comes from, in the order they are tried.
enum class CredentialSource {
  none,         ///< no credential anywhere
  environment,  ///< TINKER_API_KEY
  command,      ///< TINKER_CREDENTIAL_CMD
  file,         ///< the default key of the credentials file (CredentialStore::default_path)
};
/// "none", "environment", "command" or "file".
const char* to_string(CredentialSource source) noexcept;

/// Which source `ClientOptions::from_environment(env)` takes its credential from: TINKER_API_KEY,
/// else TINKER_CREDENTIAL_CMD, else the credentials file's default key (empty values count as
/// unset). Reads the credentials file only when the variables are unset; throws as
/// CredentialStore::load does.
CredentialSource credential_source(const ClientOptions::EnvLookup& env);

}  // namespace tinker
