#include "text/hub_layout.hpp"

#include <tinker/error.hpp>

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <random>
#include <system_error>

namespace tinker::tokenizer_detail {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const fs::path& path, const std::string& problem) {
  throw error(errc::invalid_configuration, "hub cache " + path.string() + ": " + problem);
}

// Unique across the threads and processes writing one cache at the same time.
std::string unique_suffix() {
  static std::atomic<unsigned> counter{0};
  static const std::uint64_t process_random = std::random_device{}();
  return std::to_string(::getpid()) + "-" + std::to_string(process_random) + "-" + std::to_string(counter.fetch_add(1));
}

void make_directories(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) fail(dir, "cannot create the directory: " + ec.message());
}

void rename_over(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::rename(from, to, ec);  // atomic replace (POSIX rename)
  if (!ec) return;
  fs::remove(from, ec);
  fail(to, "cannot be put in place: " + ec.message());
}

bool is_component_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

}  // namespace

std::string hub_repo_folder(std::string_view repo_id) {
  std::string folder = "models--";
  for (char c : repo_id) {
    if (c == '/') {
      folder += "--";
    } else {
      folder += c;
    }
  }
  return folder;
}

std::string path_component_problem(std::string_view name) {
  if (name.empty()) return "is empty";
  if (name.size() > 128) return "is longer than 128 characters";
  if (name == "." || name == "..") return "is '.' or '..'";
  for (char c : name) {
    if (!is_component_char(c)) return "may only contain letters, digits, '.', '_' and '-'";
  }
  return {};
}

HubRepoWriter::HubRepoWriter(const fs::path& hub, std::string_view repo_id) : folder_(hub / hub_repo_folder(repo_id)) {}

fs::path HubRepoWriter::new_temporary_blob() const {
  const fs::path blobs = folder_ / "blobs";
  make_directories(blobs);
  // ".incomplete" as huggingface_hub names its partial downloads; the unique part keeps
  // concurrent writers apart (huggingface_hub takes a file lock instead).
  return blobs / (".tmp-" + unique_suffix() + ".incomplete");
}

fs::path HubRepoWriter::commit_blob(const fs::path& temporary, std::string_view etag) const {
  if (auto problem = path_component_problem(etag); !problem.empty()) {
    std::error_code ec;
    fs::remove(temporary, ec);
    fail(temporary, "the ETag " + problem);
  }
  const fs::path blob = folder_ / "blobs" / std::string(etag);
  rename_over(temporary, blob);
  return blob;
}

fs::path HubRepoWriter::link_snapshot_file(std::string_view commit, std::string_view file_name,
                                           std::string_view etag) const {
  if (auto problem = path_component_problem(commit); !problem.empty()) fail(folder_, "the commit " + problem);
  if (auto problem = path_component_problem(etag); !problem.empty()) fail(folder_, "the ETag " + problem);
  const fs::path link = folder_ / "snapshots" / std::string(commit) / std::string(file_name);
  make_directories(link.parent_path());
  // A file in a folder of the repo ("original/params.json") is one more level away from blobs/.
  fs::path target = fs::path("..") / "..";
  for (const char c : file_name) {
    if (c == '/') target /= "..";
  }
  const fs::path temporary = link.parent_path() / (".tmp-" + unique_suffix() + ".link");
  std::error_code ec;
  fs::create_symlink(target / "blobs" / std::string(etag), temporary, ec);
  if (ec) fail(temporary, "cannot create the link: " + ec.message());
  rename_over(temporary, link);
  return link;
}

void HubRepoWriter::write_ref(std::string_view revision, std::string_view commit) const {
  const fs::path ref = folder_ / "refs" / std::string(revision);
  make_directories(ref.parent_path());
  const fs::path temporary = ref.parent_path() / (".tmp-" + unique_suffix() + ".ref");
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out.write(commit.data(), static_cast<std::streamsize>(commit.size()));
    out.close();
    if (!out) {
      std::error_code ec;
      fs::remove(temporary, ec);
      fail(temporary, std::string("cannot be written: ") + std::strerror(errno));
    }
  }
  rename_over(temporary, ref);
}

}  // namespace tinker::tokenizer_detail
