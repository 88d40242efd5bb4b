// hub_commit: huggingface_hub's create_commit for files on disk. Each file is sized, sampled and
// hashed (SHA-256, streamed); the Hub's preupload answer sorts them into LFS and regular files;
// the LFS objects the Hub lacks go up through the LFS batch API (one PUT, or one PUT per part and
// a completion POST when the Hub asks for multipart) and are verified; then one NDJSON commit
// names every file, regular ones inline in base64.
#include "hub/hub_call.hpp"

#include <boost/asio/use_awaitable.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

namespace tinker {
namespace hub_detail {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
namespace fs = std::filesystem;

constexpr std::size_t sample_bytes = 512;
constexpr std::size_t preupload_chunk = 256;  // files per preupload request, as huggingface_hub
constexpr std::string_view lfs_media_type = "application/vnd.git-lfs+json";

// One file of the commit and what the Hub said about it.
class Addition {
 public:
  Addition() = default;
  HubUploadFile file;
  std::uint64_t size = 0;
  std::string sample;
  std::string sha256;  ///< 64 hex digits
  bool lfs = false;
  bool ignored = false;  ///< the Hub's shouldIgnore (its .gitignore)
};

[[noreturn]] void cannot_read(const fs::path& path) {
  throw error(errc::invalid_argument, "cannot read " + path.string());
}

std::string sha256_of_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) cannot_read(path);
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  EVP_DigestInit_ex(context.get(), EVP_sha256(), nullptr);
  std::array<char, 64 * 1024> buffer{};
  while (in) {
    in.read(buffer.data(), buffer.size());
    EVP_DigestUpdate(context.get(), buffer.data(), static_cast<std::size_t>(in.gcount()));
  }
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  EVP_DigestFinal_ex(context.get(), digest.data(), &length);
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < length; ++i) {
    out += hex[digest[i] >> 4];
    out += hex[digest[i] & 0xF];
  }
  return out;
}

std::string read_whole(const fs::path& path, std::size_t limit = std::string::npos) {
  std::ifstream in(path, std::ios::binary);
  if (!in) cannot_read(path);
  if (limit == std::string::npos) {
    std::ostringstream bytes;
    bytes << in.rdbuf();
    return std::move(bytes).str();
  }
  std::string bytes(limit, '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(limit));
  bytes.resize(static_cast<std::size_t>(in.gcount()));
  return bytes;
}

std::vector<Addition> describe(const std::vector<HubUploadFile>& files) {
  std::vector<Addition> additions;
  for (const HubUploadFile& file : files) {
    std::error_code ec;
    Addition addition;
    addition.file = file;
    addition.size = fs::file_size(file.local_path, ec);
    if (ec) cannot_read(file.local_path);
    addition.sample = read_whole(file.local_path, sample_bytes);
    addition.sha256 = sha256_of_file(file.local_path);
    additions.push_back(std::move(addition));
  }
  return additions;
}

std::string revision_query(const HubCommitRequest& request) {
  return request.create_pr ? "?create_pr=1" : "";
}

const json::object& object_at(const json::value& value, std::string_view what) {
  if (!value.is_object()) throw error(errc::protocol_error, std::string(what) + ": the Hub's answer is not an object");
  return value.as_object();
}

std::string string_at(const json::object& object, std::string_view key) {
  const auto* value = object.if_contains(key);
  return value != nullptr && value->is_string() ? std::string(value->as_string()) : std::string();
}

asio::awaitable<void> preupload(HubCall* call, const HubCommitRequest* request, std::vector<Addition>* additions) {
  for (std::size_t first = 0; first < additions->size(); first += preupload_chunk) {
    const std::size_t last = std::min(additions->size(), first + preupload_chunk);
    json::array files;
    for (std::size_t i = first; i < last; ++i) {
      const Addition& addition = (*additions)[i];
      json::object entry;
      entry["path"] = addition.file.path_in_repo;
      entry["sample"] = base64(addition.sample);
      entry["size"] = addition.size;
      files.push_back(std::move(entry));
    }
    json::object payload;
    payload["files"] = std::move(files);
    http::SingleRequest post("POST", call->url("api/models/" + request->repo_id + "/preupload/" +
                                               quote_segment(request->revision) + revision_query(*request)));
    post.headers.emplace_back("Content-Type", "application/json");
    post.body = json::serialize(payload);
    const http::SingleResponse response = co_await call->send(std::move(post), Send());
    if (response.status / 100 != 2) call->fail(response, "preupload of " + request->repo_id);
    const json::value body = call->json_of(response, "preupload");
    const auto* answered = object_at(body, "preupload").if_contains("files");
    if (answered == nullptr || !answered->is_array()) throw error(errc::protocol_error, "preupload: no \"files\"");
    for (const json::value& item : answered->as_array()) {
      const json::object& file = object_at(item, "preupload");
      const std::string path = string_at(file, "path");
      for (std::size_t i = first; i < last; ++i) {
        Addition& addition = (*additions)[i];
        if (addition.file.path_in_repo != path) continue;
        // Empty files cannot go through LFS (huggingface_hub commits them as regular files).
        addition.lfs = string_at(file, "uploadMode") == "lfs" && addition.size != 0;
        const auto* ignore = file.if_contains("shouldIgnore");
        addition.ignored = ignore != nullptr && ignore->is_bool() && ignore->as_bool();
      }
    }
  }
}

http::SingleRequest lfs_json_request(std::string url, const json::object& payload) {
  http::SingleRequest request("POST", std::move(url));
  request.headers.emplace_back("Accept", std::string(lfs_media_type));
  request.headers.emplace_back("Content-Type", std::string(lfs_media_type));
  request.body = json::serialize(payload);
  return request;
}

// The basic transfer: the whole file in one PUT to the upload href (no token: it is a signed URL).
asio::awaitable<void> put_whole(HubCall* call, const Addition* addition, std::string href) {
  http::SingleRequest put("PUT", std::move(href));
  put.file_body = http::FileSlice(addition->file.local_path, 0, addition->size);
  Send how;
  how.with_token = false;
  const http::SingleResponse response = co_await call->send(std::move(put), how);
  if (response.status / 100 != 2) call->fail(response, "uploading " + addition->file.path_in_repo);
}

// The multipart transfer: header "chunk_size" and "1", "2", ... part URLs; each part PUT, its
// ETag kept, then the completion POST of {"oid", "parts": [{"partNumber", "etag"}]} to the href.
asio::awaitable<void> put_parts(HubCall* call, const Addition* addition, std::string href, json::object header) {
  std::uint64_t chunk = 0;
  if (const auto* size = header.if_contains("chunk_size")) {
    if (size->is_int64()) chunk = static_cast<std::uint64_t>(size->as_int64());
    if (size->is_string()) chunk = std::stoull(std::string(size->as_string()));
  }
  const std::uint64_t parts = chunk == 0 ? 0 : (addition->size + chunk - 1) / chunk;
  if (parts == 0) throw error(errc::protocol_error, "LFS multipart: no usable chunk_size");
  json::array etags;
  for (std::uint64_t part = 1; part <= parts; ++part) {
    const auto* url = header.if_contains(std::to_string(part));
    if (url == nullptr || !url->is_string()) {
      throw error(errc::protocol_error, "LFS multipart: no URL for part " + std::to_string(part));
    }
    http::SingleRequest put("PUT", std::string(url->as_string()));
    const std::uint64_t offset = (part - 1) * chunk;
    put.file_body = http::FileSlice(addition->file.local_path, offset, std::min(chunk, addition->size - offset));
    Send how;
    how.with_token = false;
    const http::SingleResponse response = co_await call->send(std::move(put), how);
    if (response.status / 100 != 2)
      call->fail(response, "uploading part " + std::to_string(part) + " of " + addition->file.path_in_repo);
    json::object entry;
    entry["partNumber"] = part;
    entry["etag"] = response.header("etag").value_or("");
    etags.push_back(std::move(entry));
  }
  json::object completion;
  completion["oid"] = addition->sha256;
  completion["parts"] = std::move(etags);
  Send how;
  how.with_token = false;
  const http::SingleResponse done = co_await call->send(lfs_json_request(std::move(href), completion), how);
  if (done.status / 100 != 2) call->fail(done, "completing the upload of " + addition->file.path_in_repo);
}

// One object of the batch answer: nothing to do without "actions" (the Hub has it), else upload
// and verify. Returns the bytes sent.
asio::awaitable<std::uint64_t> upload_object(HubCall* call, const Addition* addition, json::object object) {
  const auto* actions = object.if_contains("actions");
  if (actions == nullptr || !actions->is_object()) co_return 0;
  const auto* upload = actions->as_object().if_contains("upload");
  if (upload != nullptr && upload->is_object()) {
    const std::string href = string_at(upload->as_object(), "href");
    const auto* header = upload->as_object().if_contains("header");
    if (header != nullptr && header->is_object() && header->as_object().contains("chunk_size")) {
      co_await put_parts(call, addition, href, header->as_object());
    } else {
      co_await put_whole(call, addition, href);
    }
  }
  const auto* verify = actions->as_object().if_contains("verify");
  if (verify != nullptr && verify->is_object()) {
    json::object payload;
    payload["oid"] = addition->sha256;
    payload["size"] = addition->size;
    const http::SingleResponse response =
        co_await call->send(lfs_json_request(string_at(verify->as_object(), "href"), payload), Send());
    if (response.status / 100 != 2) call->fail(response, "verifying the upload of " + addition->file.path_in_repo);
  }
  co_return addition->size;
}

json::object batch_payload(const HubCommitRequest& request, const std::vector<const Addition*>& lfs) {
  json::array objects;
  for (const Addition* addition : lfs) {
    json::object object;
    object["oid"] = addition->sha256;
    object["size"] = addition->size;
    objects.push_back(std::move(object));
  }
  json::object payload;
  payload["operation"] = "upload";
  payload["transfers"] = json::array{"basic", "multipart"};
  payload["objects"] = std::move(objects);
  payload["hash_algo"] = "sha256";
  json::object ref;
  ref["name"] = request.revision;
  payload["ref"] = std::move(ref);
  return payload;
}

asio::awaitable<std::uint64_t> upload_lfs(HubCall* call, const HubCommitRequest* request,
                                          std::vector<const Addition*> lfs) {
  if (lfs.empty()) co_return 0;
  const json::object payload = batch_payload(*request, lfs);
  const http::SingleResponse response = co_await call->send(
      lfs_json_request(call->url(request->repo_id + ".git/info/lfs/objects/batch"), payload), Send());
  if (response.status / 100 != 2) call->fail(response, "the LFS batch request of " + request->repo_id);
  const json::value body = call->json_of(response, "LFS batch");
  const auto* objects = object_at(body, "LFS batch").if_contains("objects");
  if (objects == nullptr || !objects->is_array()) throw error(errc::protocol_error, "LFS batch: no \"objects\"");
  std::uint64_t total = 0;
  for (const Addition* addition : lfs) total += addition->size;
  std::uint64_t sent = 0;
  for (const json::value& item : objects->as_array()) {
    const json::object& object = object_at(item, "LFS batch");
    const std::string oid = string_at(object, "oid");
    const auto match = std::find_if(lfs.begin(), lfs.end(), [&oid](const Addition* a) { return a->sha256 == oid; });
    if (match == lfs.end()) continue;
    if (const auto* failure = object.if_contains("error")) {
      throw error(errc::request_failed, "the Hub refused the LFS upload of " + (*match)->file.path_in_repo + ": " +
                                            json::serialize(*failure));
    }
    sent += co_await upload_object(call, *match, object);
    if (request->on_progress) request->on_progress(sent, total);
  }
  co_return sent;
}

std::string commit_body(const HubCommitRequest& request, const std::vector<Addition>& additions, HubCommitInfo& info) {
  json::object header;
  header["summary"] = request.summary;
  header["description"] = request.description;
  json::object line;
  line["key"] = "header";
  line["value"] = std::move(header);
  std::string body = json::serialize(line) + "\n";
  for (const Addition& addition : additions) {
    if (addition.ignored) continue;
    json::object value;
    value["path"] = addition.file.path_in_repo;
    json::object entry;
    if (addition.lfs) {
      value["algo"] = "sha256";
      value["oid"] = addition.sha256;
      value["size"] = addition.size;
      entry["key"] = "lfsFile";
      info.lfs_files.push_back(addition.file.path_in_repo);
    } else {
      value["content"] = base64(read_whole(addition.file.local_path));
      value["encoding"] = "base64";
      entry["key"] = "file";
      info.regular_files.push_back(addition.file.path_in_repo);
    }
    entry["value"] = std::move(value);
    body += json::serialize(entry) + "\n";
  }
  return body;
}

asio::awaitable<HubCommitInfo> commit(HubCall* call, const HubCommitRequest* request) {
  std::vector<Addition> additions = describe(request->files);
  co_await preupload(call, request, &additions);
  std::vector<const Addition*> lfs;
  for (const Addition& addition : additions) {
    if (addition.lfs && !addition.ignored) lfs.push_back(&addition);
  }
  HubCommitInfo info;
  info.lfs_bytes_sent = co_await upload_lfs(call, request, std::move(lfs));

  http::SingleRequest post("POST", call->url("api/models/" + request->repo_id + "/commit/" +
                                             quote_segment(request->revision) + revision_query(*request)));
  post.headers.emplace_back("Content-Type", "application/x-ndjson");
  post.body = commit_body(*request, additions, info);
  Send how;
  how.retry = false;  // a commit whose answer was lost would be made twice
  const http::SingleResponse response = co_await call->send(std::move(post), how);
  if (response.status / 100 != 2) call->fail(response, "the commit to " + request->repo_id);
  const json::value body = call->json_of(response, "commit");
  const json::object& answer = object_at(body, "commit");
  info.commit_url = string_at(answer, "commitUrl");
  info.commit_oid = string_at(answer, "commitOid");
  if (request->create_pr) info.pr_url = string_at(answer, "pullRequestUrl");
  co_return info;
}

}  // namespace
}  // namespace hub_detail

HubCommitInfo hub_commit(const HubOptions& options, const HubCommitRequest& request, const EnvLookup& env) {
  hub_detail::require_token(options);
  hub_detail::check_repo_id(request.repo_id);
  if (request.files.empty()) throw error(errc::invalid_argument, "a commit needs at least one file");
  hub_detail::HubCall call(options, env);
  boost::asio::io_context io;
  return hub_detail::run_blocking(io, hub_detail::commit(&call, &request));
}

}  // namespace tinker
