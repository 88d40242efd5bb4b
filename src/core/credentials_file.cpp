// ~/.tinker/credentials.json (doc/service.md#stored-credentials): reading it strictly enough that a
// damaged file is reported rather than half-used, writing it so that it is never world-readable
// and never seen half-written.
//
// Nothing read from the file appears in a message: records are named by their position, not by
// their id or any other text, because a damaged file may hold a key anywhere.
#include "core/files.hpp"

#include <tinker/credentials.hpp>
#include <tinker/error.hpp>

#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

namespace tinker {
namespace {
namespace credfile {

namespace fs = std::filesystem;
namespace json = boost::json;

constexpr std::int64_t supported_version = 1;

[[noreturn]] void invalid(const fs::path& path, const std::string& what) {
  throw error(errc::invalid_file, "credentials file " + path.string() + ": " + what);
}

[[noreturn]] void write_failed(const fs::path& path, const std::string& step, int error_number) {
  throw error(errc::io_error,
              "cannot write the credentials file " + path.string() + ": " + step + ": " + std::strerror(error_number));
}

// "the 2nd record of keys": a position, never the id (see the file comment).
std::string record_name(std::size_t index) {
  return "record " + std::to_string(index + 1) + " of keys";
}

// An optional string member: absent or null -> nullopt; any other non-string -> an error.
std::optional<std::string> optional_string(const json::object& object, std::string_view member, const fs::path& path,
                                           const std::string& where) {
  const json::value* value = object.if_contains(member);
  if (value == nullptr || value->is_null()) return std::nullopt;
  if (!value->is_string()) invalid(path, where + ": '" + std::string(member) + "' must be a string");
  return std::string(value->as_string());
}

// `{"name": ...}` under `member` of `details`, or nullopt.
std::optional<std::string> nested_string(const json::object& details, std::string_view member, std::string_view field,
                                         const fs::path& path, const std::string& where) {
  const json::value* value = details.if_contains(member);
  if (value == nullptr || value->is_null()) return std::nullopt;
  if (!value->is_object()) invalid(path, where + ": 'details." + std::string(member) + "' must be an object");
  return optional_string(value->as_object(), field, path, where + ": details." + std::string(member));
}

std::optional<CredentialDetails> read_details(const json::object& record, const fs::path& path,
                                              const std::string& where) {
  const json::value* value = record.if_contains("details");
  if (value == nullptr || value->is_null()) return std::nullopt;
  if (!value->is_object()) invalid(path, where + ": 'details' must be an object");
  CredentialDetails details;
  details.org_name = nested_string(value->as_object(), "org_details", "name", path, where);
  details.user_email = nested_string(value->as_object(), "user_details", "email", path, where);
  return details;
}

bool is_known_type(std::string_view type) {
  return type == "manual" || type == "generated";
}

StoredCredential read_record(std::string id, const json::value& value, std::size_t index, const fs::path& path) {
  const std::string where = record_name(index);
  if (!value.is_object()) invalid(path, where + " is not an object");
  const json::object& object = value.as_object();
  StoredCredential record;
  record.id = std::move(id);
  const json::value* type = object.if_contains("type");
  if (type == nullptr || !type->is_string()) invalid(path, where + ": 'type' must be a string");
  record.type = std::string(type->as_string());
  record.raw_record = Secret(json::serialize(value));
  const json::value* key = object.if_contains("key");
  if (is_known_type(record.type)) {
    if (key == nullptr || !key->is_string()) invalid(path, where + ": 'key' must be a string");
    record.name = optional_string(object, "name", path, where).value_or("");
    record.note = optional_string(object, "note", path, where);
    record.details = read_details(object, path, where);
  } else {
    // A type this SDK does not know: read what it can, refuse nothing, keep the rest as it is.
    const json::value* name = object.if_contains("name");
    if (name != nullptr && name->is_string()) record.name = std::string(name->as_string());
  }
  if (key != nullptr && key->is_string()) record.key = Secret(std::string(key->as_string()));
  return record;
}

void read_header(const json::object& document, const fs::path& path) {
  const json::value* version = document.if_contains("version");
  if (version == nullptr) invalid(path, "'version' is missing");
  const bool is_one = (version->is_int64() && version->get_int64() == supported_version) ||
                      (version->is_uint64() && version->get_uint64() == supported_version);
  if (!is_one) invalid(path, "unsupported 'version' (this SDK reads version 1)");
}

// ---- Writing ------------------------------------------------------------------------------

// The members this SDK manages set on top of the record as read.
json::object record_object(const StoredCredential& record) {
  json::object object;
  if (!record.raw_record.empty()) {
    boost::system::error_code ec;
    json::value raw = json::parse(record.raw_record.reveal(), ec);
    if (!ec && raw.is_object()) object = std::move(raw.as_object());
  }
  object["type"] = record.type;
  if (!record.key.empty()) object["key"] = record.key.reveal();
  if (!is_known_type(record.type)) {
    if (!record.name.empty()) object["name"] = record.name;
    return object;
  }
  object["name"] = record.name;
  if (record.note) {
    object["note"] = *record.note;
  } else {
    object.erase("note");
  }
  if (!record.details) {
    object.erase("details");
    return object;
  }
  json::value& details = object["details"];
  if (!details.is_object()) details = json::object();
  json::object& members = details.as_object();
  const auto set_nested = [&members](std::string_view member, std::string_view field,
                                     const std::optional<std::string>& text) {
    if (!text) return;
    json::value& nested = members[member];
    if (!nested.is_object()) nested = json::object();
    nested.as_object()[field] = *text;
  };
  set_nested("org_details", "name", record.details->org_name);
  set_nested("user_details", "email", record.details->user_email);
  return object;
}

std::string document_text(const CredentialStore& store) {
  json::object document;
  document["version"] = supported_version;
  if (store.default_id) {
    document["default"] = *store.default_id;
  } else {
    document["default"] = nullptr;
  }
  json::object& keys = document["keys"].emplace_object();
  for (const StoredCredential& record : store.keys) keys[record.id] = record_object(record);
  return json::serialize(document) + "\n";
}

// Creates the file's directory with mode 0700 when it is missing (its parents with the default
// mode). An existing directory is left as it is: it may be the user's own (a path given in code).
void ensure_directory(const fs::path& path, const fs::path& directory) {
  std::error_code ec;
  if (fs::is_directory(directory, ec)) return;
  if (directory.has_parent_path()) {
    fs::create_directories(directory.parent_path(), ec);
    if (ec) write_failed(path, "creating " + directory.parent_path().string(), ec.value());
  }
  if (::mkdir(directory.c_str(), 0700) == 0) {
    ::chmod(directory.c_str(), 0700);  // an unusual umask may have taken the owner's bits too
  } else if (errno != EEXIST) {
    write_failed(path, "creating " + directory.string(), errno);
  }
}

void write_all(int fd, const std::string& text, const fs::path& path) {
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) write_failed(path, "writing the temporary file", n < 0 ? errno : EIO);
    written += static_cast<std::size_t>(n);
  }
}

// The directory entry of the rename reaches the disk too (best effort: some file systems refuse).
void sync_directory(const fs::path& directory) {
  const int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace credfile
}  // namespace

std::optional<std::filesystem::path> CredentialStore::default_path(const ClientOptions::EnvLookup& env) {
  if (!env) return std::nullopt;
  std::optional<std::string> home = env("HOME");
  if (!home || home->empty()) return std::nullopt;
  return std::filesystem::path(*home) / ".tinker" / "credentials.json";
}

CredentialStore CredentialStore::load(const std::filesystem::path& path) {
  namespace json = boost::json;
  std::error_code ec;
  const bool exists = std::filesystem::exists(path, ec);
  if (ec) {
    throw error(errc::io_error, "credentials file " + path.string() + ": cannot be read: " + ec.message());
  }
  if (!exists) return {};
  const std::string text = detail::read_whole_file(path);
  boost::system::error_code parse_error;
  const json::value document = json::parse(text, parse_error);
  if (parse_error) credfile::invalid(path, "not valid JSON (" + parse_error.message() + ")");
  if (!document.is_object()) credfile::invalid(path, "not a JSON object");
  const json::object& object = document.as_object();
  credfile::read_header(object, path);

  CredentialStore store;
  if (const json::value* keys = object.if_contains("keys"); keys != nullptr && !keys->is_null()) {
    if (!keys->is_object()) credfile::invalid(path, "'keys' must be an object");
    std::size_t index = 0;
    for (const auto& member : keys->as_object()) {
      store.keys.push_back(credfile::read_record(std::string(member.key()), member.value(), index++, path));
    }
  }
  store.default_id = credfile::optional_string(object, "default", path, "the file");
  if (store.default_id && store.find(*store.default_id) == nullptr) {
    credfile::invalid(path, "'default' names no record of 'keys'");
  }
  return store;
}

void CredentialStore::save(const std::filesystem::path& path) const {
  const std::string text = credfile::document_text(*this);
  const std::filesystem::path directory = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  credfile::ensure_directory(path, directory);
  std::string temporary = (directory / ("." + path.filename().string() + ".tmp-XXXXXX")).string();
  const int fd = ::mkstemp(temporary.data());  // mode 0600 from its creation
  if (fd < 0) credfile::write_failed(path, "creating a temporary file in " + directory.string(), errno);
  try {
    if (::fchmod(fd, 0600) != 0) credfile::write_failed(path, "setting the temporary file's mode", errno);
    credfile::write_all(fd, text, path);
    if (::fsync(fd) != 0) credfile::write_failed(path, "syncing the temporary file", errno);
    const int closed = ::close(fd);
    if (closed != 0) credfile::write_failed(path, "closing the temporary file", errno);
  } catch (...) {
    ::close(fd);  // a second close after a failed one only fails again: harmless
    ::unlink(temporary.c_str());
    throw;
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error_number = errno;
    ::unlink(temporary.c_str());
    credfile::write_failed(path, "replacing the file", error_number);
  }
  credfile::sync_directory(directory);
}

const StoredCredential* CredentialStore::find(std::string_view key_id) const noexcept {
  const auto it =
      std::find_if(keys.begin(), keys.end(), [key_id](const StoredCredential& c) { return c.id == key_id; });
  return it == keys.end() ? nullptr : &*it;
}

const StoredCredential* CredentialStore::default_credential() const noexcept {
  return default_id ? find(*default_id) : nullptr;
}

void CredentialStore::put(StoredCredential credential, bool make_default) {
  if (make_default) default_id = credential.id;
  const auto it = std::find_if(keys.begin(), keys.end(),
                               [&credential](const StoredCredential& c) { return c.id == credential.id; });
  if (it != keys.end()) {
    *it = std::move(credential);
  } else {
    keys.push_back(std::move(credential));
  }
}

bool CredentialStore::remove(std::string_view key_id) {
  const auto it =
      std::find_if(keys.begin(), keys.end(), [key_id](const StoredCredential& c) { return c.id == key_id; });
  if (it == keys.end()) return false;
  if (default_id && *default_id == key_id) default_id.reset();  // before the erase: key_id may view the record
  keys.erase(it);
  return true;
}

const char* to_string(CredentialSource source) noexcept {
  switch (source) {
    case CredentialSource::none: return "none";
    case CredentialSource::environment: return "environment";
    case CredentialSource::command: return "command";
    case CredentialSource::file: return "file";
  }
  return "unknown";
}

CredentialSource credential_source(const ClientOptions::EnvLookup& env) {
  const auto is_set = [&env](std::string_view name) {
    const std::optional<std::string> value = env ? env(name) : std::nullopt;
    return value && !value->empty();
  };
  if (is_set("TINKER_API_KEY")) return CredentialSource::environment;
  if (is_set("TINKER_CREDENTIAL_CMD")) return CredentialSource::command;
  const std::optional<std::filesystem::path> path = CredentialStore::default_path(env);
  if (!path) return CredentialSource::none;
  const CredentialStore store = CredentialStore::load(*path);
  const StoredCredential* stored = store.default_credential();
  return stored != nullptr && !stored->key.empty() ? CredentialSource::file : CredentialSource::none;
}

}  // namespace tinker
