#include "programs/local/server/hub_store.hpp"

#include "programs/local/tokenizer/tokenizer_training.hpp"

#include <algorithm>
#include <array>

namespace tinker::local {
namespace {

constexpr std::uint64_t lfs_threshold = 10u << 20;

// The .gitattributes the Hub puts in every new model repo (abridged to the common patterns).
constexpr std::string_view kGitattributes =
    "*.bin filter=lfs diff=lfs merge=lfs -text\n"
    "*.safetensors filter=lfs diff=lfs merge=lfs -text\n"
    "*.pt filter=lfs diff=lfs merge=lfs -text\n"
    "*.pth filter=lfs diff=lfs merge=lfs -text\n"
    "*.ckpt filter=lfs diff=lfs merge=lfs -text\n"
    "*.h5 filter=lfs diff=lfs merge=lfs -text\n"
    "*.msgpack filter=lfs diff=lfs merge=lfs -text\n"
    "*.onnx filter=lfs diff=lfs merge=lfs -text\n"
    "*.gguf filter=lfs diff=lfs merge=lfs -text\n"
    "*.tar filter=lfs diff=lfs merge=lfs -text\n"
    "*.zip filter=lfs diff=lfs merge=lfs -text\n"
    "*.gz filter=lfs diff=lfs merge=lfs -text\n";

constexpr std::array<std::string_view, 12> kLfsSuffixes = {".bin",     ".safetensors", ".pt",   ".pth", ".ckpt", ".h5",
                                                           ".msgpack", ".onnx",        ".gguf", ".tar", ".zip",  ".gz"};

HubFile regular_file(std::string bytes) {
  HubFile file;
  file.etag = git_blob_id(bytes);
  file.bytes = std::make_shared<const std::string>(std::move(bytes));
  return file;
}

// A path the Hub accepts: relative, no empty, "." or ".." part, not inside .git.
bool valid_path(std::string_view path) {
  if (path.empty() || path.front() == '/' || path.back() == '/') return false;
  std::size_t start = 0;
  while (start <= path.size()) {
    const auto end = std::min(path.find('/', start), path.size());
    const std::string_view part = path.substr(start, end - start);
    if (part.empty() || part == "." || part == ".." || part == ".git") return false;
    start = end + 1;
  }
  return true;
}

}  // namespace

const HubCommit* PushedRepo::resolve(std::string_view revision) const {
  if (const auto ref = refs.find(revision); ref != refs.end()) return &commits.at(ref->second);
  if (const auto commit = commits.find(revision); commit != commits.end()) return &commit->second;
  return nullptr;
}

std::string HubStore::account_for(std::string_view user_id) {
  const std::string_view hash = user_id.substr(user_id.rfind(':') + 1);
  return "user-" + std::string(hash.substr(0, 12));
}

const PushedRepo& HubStore::create_repo(const std::string& account, const std::string& space, const std::string& name,
                                        bool is_private) {
  if (space != account) {
    throw HubRefusal(403, "", "You don't have the rights to create a model under the namespace \"" + space + "\"");
  }
  const std::string id = space + "/" + name;
  if (repos_.find(id) != repos_.end()) throw HubRefusal(409, "", "You already created this model repo");
  PushedRepo repo;
  repo.id = id;
  repo.owner = account;
  repo.is_private = is_private;
  HubCommit initial;
  initial.summary = "initial commit";
  initial.files.emplace(".gitattributes", regular_file(std::string(kGitattributes)));
  initial.id = detail::sha1_hex(id + "\ninitial commit\n" + std::to_string(++counter_));
  repo.refs.emplace("main", initial.id);
  repo.commits.emplace(initial.id, std::move(initial));
  return repos_.emplace(id, std::move(repo)).first->second;
}

PushedRepo& HubStore::visible_repo(std::string_view id, std::string_view account) {
  const auto it = repos_.find(id);
  if (it != repos_.end() && (!it->second.is_private || it->second.owner == account)) return it->second;
  throw HubRefusal(account.empty() ? 401 : 404, "RepoNotFound", "Repository not found");
}

const PushedRepo* HubStore::find(std::string_view id) const {
  const auto it = repos_.find(id);
  return it == repos_.end() ? nullptr : &it->second;
}

void HubStore::create_branch(PushedRepo& repo, const std::string& branch) {
  if (branch.starts_with("refs/") || branch.empty())
    throw HubRefusal(400, "", "Invalid reference for a branch: " + branch);
  if (repo.refs.find(branch) != repo.refs.end()) throw HubRefusal(409, "", "Reference already exists: " + branch);
  repo.refs.emplace(branch, repo.refs.at("main"));
}

std::string HubStore::upload_mode(std::string_view path, std::uint64_t size, std::string_view sample) {
  const bool pattern = std::any_of(kLfsSuffixes.begin(), kLfsSuffixes.end(),
                                   [path](std::string_view suffix) { return path.ends_with(suffix); });
  const bool binary = sample.find('\0') != std::string_view::npos;
  return pattern || binary || size >= lfs_threshold ? "lfs" : "regular";
}

std::string HubStore::begin_upload(const std::string& oid, std::uint64_t size, std::uint64_t chunk_size) {
  std::string token = detail::sha1_hex(oid + ":" + std::to_string(++counter_));
  PendingLfsUpload upload;
  upload.oid = oid;
  upload.size = size;
  upload.chunk_size = chunk_size;
  uploads_[token] = std::move(upload);
  return token;
}

std::string HubStore::put(const std::string& token, int part, std::string bytes) {
  const auto it = uploads_.find(token);
  if (it == uploads_.end()) throw HubRefusal(404, "", "No such upload (or it was completed)");
  PendingLfsUpload& upload = it->second;
  const std::string etag = "\"" + detail::sha256_hex(bytes).substr(0, 32) + "\"";
  if (part > 0) {
    upload.parts[part] = std::move(bytes);
    return etag;
  }
  if (bytes.size() != upload.size || detail::sha256_hex(bytes) != upload.oid) {
    throw HubRefusal(400, "", "the uploaded bytes do not match the object's size and SHA-256");
  }
  lfs_objects_[upload.oid] = std::make_shared<const std::string>(std::move(bytes));
  uploads_.erase(it);
  return etag;
}

void HubStore::complete(const std::string& token) {
  const auto it = uploads_.find(token);
  if (it == uploads_.end()) throw HubRefusal(404, "", "No such upload (or it was completed)");
  std::string whole;
  int expected = 1;
  for (auto& [number, bytes] : it->second.parts) {
    if (number != expected++) throw HubRefusal(400, "", "part " + std::to_string(expected - 1) + " is missing");
    whole += bytes;
  }
  it->second.parts.clear();
  put(token, 0, std::move(whole));
}

std::string HubStore::commit(PushedRepo& repo, const std::string& revision, bool create_pr, const std::string& summary,
                             const std::vector<HubCommitFile>& files, int& pr) {
  const auto ref = repo.refs.find(revision);
  if (ref == repo.refs.end() || ref->first.starts_with("refs/")) {
    throw HubRefusal(404, "RevisionNotFound", "Invalid rev id: " + revision);
  }
  HubCommit next;
  next.summary = summary;
  next.files = repo.commits.at(ref->second).files;
  std::string digest = ref->second + "\n" + summary + "\n";
  for (const HubCommitFile& file : files) {
    if (!valid_path(file.path)) throw HubRefusal(400, "", "Invalid path: " + file.path);
    HubFile stored;
    if (file.content) {
      stored = regular_file(*file.content);
    } else {
      const auto object = lfs_objects_.find(file.lfs_oid);
      if (object == lfs_objects_.end() || object->second->size() != file.lfs_size) {
        throw HubRefusal(422, "", "LFS object " + file.lfs_oid + " of " + file.path + " was not uploaded");
      }
      stored.bytes = object->second;
      stored.etag = file.lfs_oid;
    }
    digest += file.path + " " + stored.etag + "\n";
    next.files[file.path] = std::move(stored);
  }
  next.id = detail::sha1_hex(digest + std::to_string(++counter_));
  const std::string id = next.id;
  repo.commits.emplace(id, std::move(next));
  if (create_pr) {
    pr = ++repo.pull_requests;
    repo.refs["refs/pr/" + std::to_string(pr)] = id;
  } else {
    ref->second = id;
  }
  return id;
}

}  // namespace tinker::local
