#include "programs/local/engine/checkpoint_store.hpp"

#include "programs/local/model/tiny_lm.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>

namespace tinker::local::engine_detail {
namespace fs = std::filesystem;

namespace {

// [A-Za-z0-9._-]: the bytes a path component keeps as they are.
constexpr bool is_plain_path_byte(unsigned char c) noexcept {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

// "<data>/..." path component for an id: every byte outside [A-Za-z0-9._-] as %XX.
std::string escape_path_component(std::string_view id) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(id.size() + 8);
  for (unsigned char c : id) {
    if (is_plain_path_byte(c)) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 0xF]);
    }
  }
  if (out == "." || out == "..") out = out == "." ? "%2E" : "%2E%2E";
  return out;
}

constexpr const char* state_file = "state.bin";
constexpr const char* meta_file = "meta.json";

/// Unique among the threads of this process; the directory is private to the server.
std::string temp_suffix() {
  static std::atomic<std::uint64_t> counter{0};
  return ".tmp-" + std::to_string(counter.fetch_add(1));
}

void write_file_atomically(const fs::path& target, std::string_view data) {
  fs::path temp = target;
  temp += temp_suffix();
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot create " + temp.string());
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    out.flush();
    if (!out) throw std::runtime_error("cannot write " + temp.string());
  }
  std::error_code ec;
  fs::rename(temp, target, ec);
  if (ec) {
    fs::remove(temp, ec);
    throw std::runtime_error("cannot rename into " + target.string());
  }
}

std::optional<std::string> read_file(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return std::move(buffer).str();
}

const boost::json::value& member(const boost::json::object& object, const char* key) {
  const boost::json::value* value = object.if_contains(key);
  if (value == nullptr) throw std::runtime_error(std::string("meta.json: missing ") + key);
  return *value;
}

std::string string_member(const boost::json::object& object, const char* key) {
  const auto& value = member(object, key);
  if (!value.is_string()) throw std::runtime_error(std::string("meta.json: ") + key + " is not a string");
  return std::string(value.get_string());
}

std::int64_t int_member(const boost::json::object& object, const char* key) {
  const auto& value = member(object, key);
  if (!value.is_int64()) throw std::runtime_error(std::string("meta.json: ") + key + " is not an integer");
  return value.get_int64();
}

bool bool_member(const boost::json::object& object, const char* key) {
  const auto& value = member(object, key);
  if (!value.is_bool()) throw std::runtime_error(std::string("meta.json: ") + key + " is not a boolean");
  return value.get_bool();
}

}  // namespace

bool valid_checkpoint_name(std::string_view name) {
  if (name.empty() || name.size() > 128 || name == "." || name == "..") return false;
  return std::all_of(name.begin(), name.end(), [](unsigned char c) { return is_plain_path_byte(c); });
}

Checkpoint CheckpointMeta::to_checkpoint() const {
  TinkerPath p = path();
  Checkpoint checkpoint(p.checkpoint_id(), type, created, p.to_string());
  checkpoint.size_bytes = size_bytes;
  checkpoint.public_ = is_public;
  checkpoint.expires_at = expires_at;
  checkpoint.base_model = base_model;
  checkpoint.user_metadata = user_metadata;
  return checkpoint;
}

fs::path CheckpointStore::directory(const CheckpointMeta& meta) const {
  return root_ / escape_path_component(meta.run_id) / path_kind(meta.type) / meta.name;
}

void CheckpointStore::write(const CheckpointMeta& meta, std::string_view state) const {
  fs::path dir = directory(meta);
  fs::create_directories(dir);
  write_file_atomically(dir / state_file, state);
  write_file_atomically(dir / meta_file, meta_to_json(meta));
}

void CheckpointStore::write_file(const CheckpointMeta& meta, const std::string& file, std::string_view data) const {
  const fs::path dir = directory(meta);
  fs::create_directories(dir);
  write_file_atomically(dir / file, data);
}

std::optional<std::string> CheckpointStore::read_file_of(const CheckpointMeta& meta, const std::string& file) const {
  return read_file(directory(meta) / file);
}

void CheckpointStore::write_copy(const CheckpointMeta& source, const CheckpointMeta& copy) const {
  const fs::path from = directory(source);
  const fs::path to = directory(copy);
  fs::create_directories(to);
  for (const auto& entry : fs::directory_iterator(from)) {
    const std::string file = entry.path().filename().string();
    if (file == meta_file || file.find(".tmp-") != std::string::npos || !entry.is_regular_file()) continue;
    std::error_code ignored;
    fs::remove(to / file, ignored);
    std::error_code link_failed;
    fs::create_hard_link(entry.path(), to / file, link_failed);
    if (link_failed) fs::copy_file(entry.path(), to / file);  // throws on failure
  }
  if (!fs::exists(to / state_file)) throw std::runtime_error("cannot copy the files of " + from.string());
  write_file_atomically(to / meta_file, meta_to_json(copy));
}

void CheckpointStore::write_meta(const CheckpointMeta& meta) const {
  write_file_atomically(directory(meta) / meta_file, meta_to_json(meta));
}

std::string CheckpointStore::read_state(const CheckpointMeta& meta) const {
  auto data = read_file(directory(meta) / state_file);
  if (!data) throw UserError("checkpoint " + meta.tinker_path() + " is no longer available");
  return std::move(*data);
}

void CheckpointStore::remove(const CheckpointMeta& meta) const {
  std::error_code ec;
  fs::remove_all(directory(meta), ec);
}

std::vector<CheckpointMeta> CheckpointStore::scan() const {
  std::vector<CheckpointMeta> found;
  std::error_code ec;
  if (!fs::is_directory(root_, ec)) return found;
  for (const auto& run_dir : fs::directory_iterator(root_, ec)) {
    for (const char* kind : {"weights", "sampler_weights", "external_weights"}) {
      fs::path kind_dir = run_dir.path() / kind;
      if (!fs::is_directory(kind_dir, ec)) continue;
      for (const auto& checkpoint_dir : fs::directory_iterator(kind_dir, ec)) {
        auto text = read_file(checkpoint_dir.path() / meta_file);
        if (!text || !fs::exists(checkpoint_dir.path() / state_file, ec)) continue;
        try {
          CheckpointMeta meta = meta_from_json(*text);
          // The directory is authoritative for where the files are; skip moved/renamed copies.
          if (directory(meta) != checkpoint_dir.path()) continue;
          found.push_back(std::move(meta));
        } catch (const std::exception&) {
          // A damaged meta.json: the checkpoint is not listed (and never loaded half-read).
        }
      }
    }
  }
  return found;
}

std::string CheckpointStore::meta_to_json(const CheckpointMeta& meta) {
  boost::json::object lora;
  lora["rank"] = meta.lora.rank;
  if (meta.lora.seed) lora["seed"] = *meta.lora.seed;
  lora["train_unembed"] = meta.lora.train_unembed;
  lora["train_mlp"] = meta.lora.train_mlp;
  lora["train_attn"] = meta.lora.train_attn;

  boost::json::object object;
  object["format"] = 1;
  object["run_id"] = meta.run_id;
  object["type"] = to_string(meta.type);
  object["name"] = meta.name;
  object["owner"] = meta.owner;
  object["base_model"] = meta.base_model;
  object["lora_config"] = std::move(lora);
  object["created"] = format_timestamp(meta.created);
  if (meta.expires_at) object["expires_at"] = format_timestamp(*meta.expires_at);
  object["public"] = meta.is_public;
  object["size_bytes"] = meta.size_bytes;
  object["has_optimizer"] = meta.has_optimizer;
  if (meta.optimizer_type != "adamw") object["optimizer_type"] = meta.optimizer_type;
  if (meta.user_metadata) {
    boost::json::object metadata;
    for (const auto& [key, value] : *meta.user_metadata) metadata[key] = value;
    object["user_metadata"] = std::move(metadata);
  }
  if (meta.copied_from) object["copied_from"] = *meta.copied_from;
  return boost::json::serialize(object);
}

CheckpointMeta CheckpointStore::meta_from_json(std::string_view text) {
  boost::system::error_code ec;
  boost::json::value value = boost::json::parse(text, ec);
  if (ec || !value.is_object()) throw std::runtime_error("meta.json: not a JSON object");
  const auto& object = value.get_object();
  CheckpointMeta meta;
  meta.run_id = string_member(object, "run_id");
  std::string type = string_member(object, "type");
  if (type == "training") {
    meta.type = CheckpointType::training;
  } else if (type == "sampler") {
    meta.type = CheckpointType::sampler;
  } else if (type == "external") {
    meta.type = CheckpointType::external;
  } else {
    throw std::runtime_error("meta.json: unknown type " + type);
  }
  meta.name = string_member(object, "name");
  if (!valid_checkpoint_name(meta.name)) throw std::runtime_error("meta.json: invalid name");
  meta.owner = string_member(object, "owner");
  meta.base_model = string_member(object, "base_model");
  const auto& lora_value = member(object, "lora_config");
  if (!lora_value.is_object()) throw std::runtime_error("meta.json: lora_config is not an object");
  const auto& lora = lora_value.get_object();
  meta.lora.rank = int_member(lora, "rank");
  if (lora.contains("seed")) meta.lora.seed = int_member(lora, "seed");
  meta.lora.train_unembed = bool_member(lora, "train_unembed");
  meta.lora.train_mlp = bool_member(lora, "train_mlp");
  meta.lora.train_attn = bool_member(lora, "train_attn");
  meta.created = parse_timestamp(string_member(object, "created"));
  if (object.contains("expires_at")) meta.expires_at = parse_timestamp(string_member(object, "expires_at"));
  meta.is_public = bool_member(object, "public");
  meta.size_bytes = int_member(object, "size_bytes");
  meta.has_optimizer = bool_member(object, "has_optimizer");
  // Absent in checkpoints saved before Dimuon existed (all AdamW).
  if (object.contains("optimizer_type")) meta.optimizer_type = string_member(object, "optimizer_type");
  // Absent in checkpoints saved before user_metadata and copy_weights existed.
  if (const boost::json::value* metadata = object.if_contains("user_metadata")) {
    if (!metadata->is_object()) throw std::runtime_error("meta.json: user_metadata is not an object");
    auto& pairs = meta.user_metadata.emplace();
    for (const auto& entry : metadata->get_object()) {
      if (!entry.value().is_string()) throw std::runtime_error("meta.json: a user_metadata value is not a string");
      pairs[std::string(entry.key())] = std::string(entry.value().get_string());
    }
  }
  if (object.contains("copied_from")) meta.copied_from = string_member(object, "copied_from");
  return meta;
}

}  // namespace tinker::local::engine_detail
