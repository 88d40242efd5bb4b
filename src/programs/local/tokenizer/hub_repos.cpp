#include "programs/local/tokenizer/hub_repos.hpp"

#include "programs/local/tokenizer/tokenizer_training.hpp"
#include "text/hub_layout.hpp"

#include <tinker/error.hpp>

#include <fstream>
#include <sstream>

namespace tinker::local {
namespace {

namespace fs = std::filesystem;

std::string read_bytes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw tinker::error(errc::invalid_configuration, "tokenizer cache " + file.string() + ": cannot be read");
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return std::move(bytes).str();
}

}  // namespace

std::string git_blob_id(std::string_view bytes) {
  std::string object = "blob " + std::to_string(bytes.size());
  object += '\0';
  object += bytes;
  return detail::sha1_hex(object);
}

HubRepo read_installed_repo(const fs::path& hub_cache, std::string_view repo_id) {
  const fs::path repo = hub_cache / tokenizer_detail::hub_repo_folder(repo_id);
  HubRepo result;
  result.id = std::string(repo_id);
  result.commit = read_bytes(repo / "refs" / "main");
  while (!result.commit.empty() && (result.commit.back() == '\n' || result.commit.back() == '\r')) {
    result.commit.pop_back();
  }
  const fs::path snapshot = repo / "snapshots" / result.commit;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(snapshot, ec)) {
    if (!entry.is_regular_file()) continue;
    HubFile file;
    file.bytes = std::make_shared<const std::string>(read_bytes(entry.path()));
    file.etag = git_blob_id(*file.bytes);
    result.files.emplace(entry.path().filename().string(), std::move(file));
  }
  if (ec || result.files.empty()) {
    throw tinker::error(errc::invalid_configuration, "tokenizer cache " + snapshot.string() + ": no files");
  }
  return result;
}

}  // namespace tinker::local
