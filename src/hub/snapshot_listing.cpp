// Reading and checking the Hub's file listing of a revision (snapshot_listing.hpp).
#include "hub/snapshot_listing.hpp"

#include "text/hub_layout.hpp"

#include <tinker/error.hpp>

#include <boost/json/object.hpp>

namespace tinker::hub_detail {
namespace {

namespace json = boost::json;

constexpr std::size_t max_path_part = 255;  // NAME_MAX of the usual file systems

[[noreturn]] void listing_error(std::string_view what, const std::string& problem) {
  throw error(errc::protocol_error, std::string(what) + ": " + problem + " (is HF_ENDPOINT a Hugging Face Hub?)");
}

std::optional<std::uint64_t> size_in(const json::object& object) {
  const json::value* size = object.if_contains("size");
  if (size == nullptr) return std::nullopt;
  if (size->is_uint64()) return size->as_uint64();
  if (size->is_int64() && size->as_int64() >= 0) return static_cast<std::uint64_t>(size->as_int64());
  return std::nullopt;
}

std::string string_in(const json::object& object, std::string_view key) {
  const json::value* value = object.if_contains(key);
  return value != nullptr && value->is_string() ? std::string(value->as_string()) : std::string();
}

ListedFile listed_file(const json::value& sibling, std::string_view what) {
  const json::object* object = sibling.if_object();
  if (object == nullptr) listing_error(what, "a sibling is not an object");
  ListedFile file;
  file.path = string_in(*object, "rfilename");
  if (file.path.empty()) listing_error(what, "a sibling has no \"rfilename\"");
  file.size = size_in(*object);
  file.etag = string_in(*object, "blobId");
  // An LFS file's blob is named by the SHA-256 of its bytes, as the Hub's X-Linked-Etag names it.
  if (const json::value* lfs = object->if_contains("lfs"); lfs != nullptr && lfs->is_object()) {
    if (std::string sha256 = string_in(lfs->as_object(), "sha256"); !sha256.empty()) file.etag = std::move(sha256);
    if (auto lfs_size = size_in(lfs->as_object())) file.size = lfs_size;
  }
  if (!file.etag.empty()) {
    if (auto problem = tokenizer_detail::path_component_problem(file.etag); !problem.empty()) {
      listing_error(what, "the blob id of \"" + file.path + "\" " + problem);
    }
  }
  return file;
}

}  // namespace

std::string snapshot_path_problem(std::string_view path) {
  if (path.empty()) return "is empty";
  if (path.front() == '/') return "is absolute";
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t end = std::min(path.find('/', start), path.size());
    const std::string_view part = path.substr(start, end - start);
    if (part.empty()) return "has an empty part";
    if (part == "." || part == "..") return "has a '.' or '..' part";
    if (part.size() > max_path_part) return "has a part longer than 255 bytes";
    start = end + 1;
  }
  for (const char c : path) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\\') return "has a backslash";
    if (byte < 0x20 || byte == 0x7f) return "has a control character";
  }
  return "";
}

RepoListing parse_repo_listing(const json::value& body, std::string_view what) {
  const json::object* object = body.if_object();
  if (object == nullptr) listing_error(what, "the answer is not a JSON object");
  RepoListing listing;
  listing.commit = string_in(*object, "sha");
  if (listing.commit.empty()) listing_error(what, "the answer names no commit (\"sha\")");
  if (auto problem = tokenizer_detail::path_component_problem(listing.commit); !problem.empty()) {
    listing_error(what, "the commit \"sha\" " + problem);
  }
  const json::value* siblings = object->if_contains("siblings");
  if (siblings == nullptr || !siblings->is_array()) listing_error(what, "the answer has no \"siblings\" list");
  for (const json::value& sibling : siblings->as_array()) listing.files.push_back(listed_file(sibling, what));
  return listing;
}

}  // namespace tinker::hub_detail
