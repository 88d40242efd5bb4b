#include <tinker/error.hpp>
#include <tinker/types/checkpoint.hpp>
#include <tinker/types/session.hpp>
#include <tinker/version.hpp>

#include <algorithm>
#include <ostream>

namespace tinker {
namespace {

constexpr std::string_view scheme = "tinker://";

[[noreturn]] void bad_path(std::string_view path, std::string_view why) {
  throw error(errc::invalid_argument, "invalid tinker path \"" + std::string(path) + "\": " + std::string(why));
}

// A NUL would cut the path short wherever it becomes a C string (the download directory is named
// after it), and other control characters have no business in ids (found by fuzzing).
bool has_control_character(std::string_view text) {
  return std::any_of(text.begin(), text.end(),
                     [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

}  // namespace

const char* path_kind(CheckpointType type) noexcept {
  switch (type) {
    case CheckpointType::training: return "weights";
    case CheckpointType::sampler: return "sampler_weights";
    case CheckpointType::external: return "external_weights";
  }
  return "weights";
}

TinkerPath TinkerPath::parse(std::string_view path) {
  if (!path.starts_with(scheme)) bad_path(path, "must start with tinker://");
  const std::string_view rest = path.substr(scheme.size());
  const std::size_t first = rest.find('/');
  const std::size_t second = first == std::string_view::npos ? first : rest.find('/', first + 1);
  if (second == std::string_view::npos || rest.find('/', second + 1) != std::string_view::npos) {
    bad_path(path, "expected tinker://<run-id>/<weights|sampler_weights|external_weights>/<name>");
  }
  const std::string_view run_id = rest.substr(0, first);
  const std::string_view kind = rest.substr(first + 1, second - first - 1);
  const std::string_view name = rest.substr(second + 1);
  if (run_id.empty()) bad_path(path, "the run id is empty");
  if (name.empty()) bad_path(path, "the checkpoint name is empty");
  if (has_control_character(run_id) || has_control_character(name)) bad_path(path, "it holds a control character");
  CheckpointType type;
  if (kind == "weights") {
    type = CheckpointType::training;
  } else if (kind == "sampler_weights") {
    type = CheckpointType::sampler;
  } else if (kind == "external_weights") {
    type = CheckpointType::external;
  } else {
    bad_path(path,
             "the kind must be 'weights', 'sampler_weights' or 'external_weights', got '" + std::string(kind) + "'");
  }
  return TinkerPath(std::string(run_id), type, std::string(name));
}

std::string TinkerPath::checkpoint_id() const {
  return std::string(path_kind(type)) + "/" + name;
}

std::string TinkerPath::to_string() const {
  return std::string(scheme) + training_run_id + "/" + checkpoint_id();
}

std::ostream& operator<<(std::ostream& os, const TinkerPath& value) {
  return os << value.to_string();
}

ClientConfigRequest::ClientConfigRequest() : sdk_version(protocol_version) {}

CreateSessionRequest::CreateSessionRequest() : sdk_version(protocol_version) {}

CreateSessionRequest::CreateSessionRequest(std::vector<std::string> tags_, JsonObject user_metadata_,
                                           std::optional<std::string> project_id_)
    : tags(std::move(tags_)),
      user_metadata(std::move(user_metadata_)),
      sdk_version(protocol_version),
      project_id(std::move(project_id_)) {}

}  // namespace tinker
