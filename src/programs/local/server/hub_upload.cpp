// The write side of tinker-local's Hugging Face Hub emulation (doc/local.md#hub-uploads), on the
// HubStore, as huggingface_hub's HfApi uses the Hub:
//
//   GET  /api/whoami-v2                               {"type":"user","name":<account>}
//   POST /api/repos/create                            {"name","organization","visibility"|"private"} -> {"url"}
//   GET  /api/models/{repo}[/revision/{rev}]          {"id","private","sha","siblings"} (?blobs=true: sizes, blob ids)
//   POST /api/models/{repo}/branch/{branch}           a branch at main
//   POST /api/models/{repo}/preupload/{rev}           {"files":[{"path","sample","size"}]} -> upload modes
//   POST /api/models/{repo}/commit/{rev}[?create_pr=1] NDJSON header/file/lfsFile lines -> commit
//   POST /{repo}.git/info/lfs/objects/batch|verify    the LFS batch API (basic, multipart over 8 MiB)
//   PUT  /_hub_lfs/{token}[?part=N], POST /_hub_lfs/{token} (multipart completion)
//
// Every /api/ and .git/ call needs "Authorization: Bearer <an API key of this server>" (the HF
// token); the value is never logged or echoed. /_hub_lfs/ URLs are capabilities, as the Hub's
// signed storage URLs are: they need no token. Errors carry X-Error-Code / X-Error-Message and
// {"error": message}, as the Hub's do.
#include "core/wire/json_writer.hpp"
#include "programs/local/server/frontend.hpp"
#include "programs/local/server/hub_store.hpp"

#include <boost/json.hpp>

#include <charconv>

namespace tinker::local::front {
namespace {

namespace json = boost::json;

constexpr std::string_view kLfsUploads = "/_hub_lfs/";
constexpr std::uint64_t kMultipartChunk = 8u << 20;

void refuse(Reply& reply, const HubRefusal& refusal) {
  reply.status = refusal.status();
  reply.content_type.assign(kJson);
  reply.body.assign("{\"error\":");
  wire::append_json_string(reply.body, refusal.what());
  reply.body += '}';
  if (!refusal.code().empty()) reply.headers.emplace_back("X-Error-Code", refusal.code());
  reply.headers.emplace_back("X-Error-Message", refusal.what());
}

std::string require_account(Frontend& fe, const Exchange& ex) {
  std::string account = hub_account(fe, ex);
  if (account.empty()) throw HubRefusal(401, "", "Invalid credentials in Authorization header");
  return account;
}

json::object parse_object(std::string_view body) {
  boost::system::error_code ec;
  json::value value = json::parse(body, ec);
  if (ec || !value.is_object()) throw HubRefusal(400, "", "the body is not a JSON object");
  return std::move(value.as_object());
}

std::string string_field(const json::object& object, std::string_view key) {
  const auto* value = object.if_contains(key);
  return value != nullptr && value->is_string() ? std::string(value->as_string()) : std::string();
}

std::uint64_t size_field(const json::object& object, std::string_view key) {
  const auto* value = object.if_contains(key);
  if (value == nullptr || !(value->is_int64() || value->is_uint64())) {
    throw HubRefusal(400, "", "\"" + std::string(key) + "\" must be an integer");
  }
  return value->is_int64() ? static_cast<std::uint64_t>(value->as_int64()) : value->as_uint64();
}

std::vector<std::string> segments(std::string_view path) {
  std::vector<std::string> parts;
  std::size_t start = 1;
  while (start <= path.size()) {
    const auto end = std::min(path.find('/', start), path.size());
    parts.push_back(percent_decode(path.substr(start, end - start)));
    start = end + 1;
  }
  return parts;
}

std::string base64_decode(std::string_view text) {
  std::string out;
  if (!wire::base64_decode(text, out)) throw HubRefusal(400, "", "the content is not base64");
  return out;
}

void whoami(Frontend& fe, Exchange& ex) {
  json::object answer;
  answer["type"] = "user";
  answer["name"] = require_account(fe, ex);
  ex.reply.json_text(json::serialize(answer));
}

void create_repo(Frontend& fe, Exchange& ex) {
  const std::string account = require_account(fe, ex);
  const json::object request = parse_object(ex.body);
  const std::string name = string_field(request, "name");
  std::string space = string_field(request, "organization");
  if (space.empty()) space = account;
  if (name.empty()) throw HubRefusal(400, "", "\"name\" is required");
  bool is_private = false;  // the Hub's default for a user namespace
  if (const auto* priv = request.if_contains("private"); priv != nullptr && priv->is_bool())
    is_private = priv->as_bool();
  const std::string visibility = string_field(request, "visibility");
  if (!visibility.empty()) is_private = visibility == "private";
  json::object answer;
  answer["url"] = fe.base_url + "/" + space + "/" + name;
  try {
    const PushedRepo& repo = fe.hub_store.create_repo(account, space, name, is_private);
    answer["name"] = repo.id;
    ex.reply.json_text(json::serialize(answer));
  } catch (const HubRefusal& refusal) {
    if (refusal.status() != 409) throw;
    answer["error"] = refusal.what();
    ex.reply.json_text(json::serialize(answer), 409);
  }
}

// As the Hub lists a file with blobs=true: its size and git blob id, and for an LFS file (the
// store names those by their 64-digit SHA-256, git blobs by 40 digits) the LFS object and the
// blob id of its pointer file.
void add_blob_fields(json::object& sibling, const HubFile& file) {
  const std::uint64_t size = file.bytes->size();
  sibling["size"] = size;
  if (file.etag.size() != 64) {
    sibling["blobId"] = file.etag;
    return;
  }
  const std::string pointer =
      "version https://git-lfs.github.com/spec/v1\noid sha256:" + file.etag + "\nsize " + std::to_string(size) + "\n";
  sibling["blobId"] = git_blob_id(pointer);
  json::object lfs;
  lfs["sha256"] = file.etag;
  lfs["size"] = size;
  lfs["pointerSize"] = pointer.size();
  sibling["lfs"] = std::move(lfs);
}

void repo_info(Frontend& fe, Exchange& ex, const std::string& id, const std::string& revision) {
  const PushedRepo& repo = fe.hub_store.visible_repo(id, hub_account(fe, ex));
  const HubCommit* commit = repo.resolve(revision);
  if (commit == nullptr) throw HubRefusal(404, "RevisionNotFound", "Invalid rev id: " + revision);
  json::object answer;
  answer["id"] = repo.id;
  answer["private"] = repo.is_private;
  answer["sha"] = commit->id;
  // ?blobs=true (huggingface_hub's files_metadata) adds what a snapshot download names its blobs by.
  const QueryParams query(ex.query);  // named: get() answers views into it
  const auto blobs = query.get("blobs");
  const bool with_blobs = blobs && (*blobs == "true" || *blobs == "True" || *blobs == "1");
  json::array siblings;
  for (const auto& [path, file] : commit->files) {
    json::object sibling;
    sibling["rfilename"] = path;
    if (with_blobs) add_blob_fields(sibling, file);
    siblings.push_back(std::move(sibling));
  }
  answer["siblings"] = std::move(siblings);
  ex.reply.json_text(json::serialize(answer));
}

PushedRepo& writable_repo(Frontend& fe, Exchange& ex, const std::string& id) {
  const std::string account = require_account(fe, ex);
  PushedRepo& repo = fe.hub_store.visible_repo(id, account);
  if (repo.owner != account) throw HubRefusal(403, "", "You don't have write access to " + id);
  return repo;
}

void preupload(Frontend& fe, Exchange& ex, const std::string& id) {
  writable_repo(fe, ex, id);
  const json::object request = parse_object(ex.body);
  const auto* files = request.if_contains("files");
  if (files == nullptr || !files->is_array()) throw HubRefusal(400, "", "\"files\" must be a list");
  json::array answered;
  for (const json::value& item : files->as_array()) {
    if (!item.is_object()) throw HubRefusal(400, "", "each file must be an object");
    const std::string path = string_field(item.as_object(), "path");
    const std::string sample = base64_decode(string_field(item.as_object(), "sample"));
    json::object file;
    file["path"] = path;
    file["uploadMode"] = HubStore::upload_mode(path, size_field(item.as_object(), "size"), sample);
    file["shouldIgnore"] = false;
    file["oid"] = nullptr;
    answered.push_back(std::move(file));
  }
  json::object answer;
  answer["files"] = std::move(answered);
  ex.reply.json_text(json::serialize(answer));
}

void create_branch(Frontend& fe, Exchange& ex, const std::string& id, const std::string& branch) {
  fe.hub_store.create_branch(writable_repo(fe, ex, id), branch);
  ex.reply.json_text("{}");
}

std::vector<HubCommitFile> commit_files(std::string_view body, std::string& summary) {
  std::vector<HubCommitFile> files;
  std::size_t start = 0;
  while (start < body.size()) {
    const auto end = std::min(body.find('\n', start), body.size());
    const std::string_view line = body.substr(start, end - start);
    start = end + 1;
    if (line.empty()) continue;
    const json::object item = parse_object(line);
    const std::string key = string_field(item, "key");
    const auto* value = item.if_contains("value");
    if (value == nullptr || !value->is_object()) throw HubRefusal(400, "", "each line needs a \"value\" object");
    const json::object& fields = value->as_object();
    if (key == "header") {
      summary = string_field(fields, "summary");
      continue;
    }
    HubCommitFile file;
    file.path = string_field(fields, "path");
    if (key == "file") {
      file.content = string_field(fields, "encoding") == "base64" ? base64_decode(string_field(fields, "content"))
                                                                  : string_field(fields, "content");
    } else if (key == "lfsFile") {
      file.lfs_oid = string_field(fields, "oid");
      file.lfs_size = size_field(fields, "size");
    } else {
      throw HubRefusal(400, "", "unsupported commit operation \"" + key + "\"");
    }
    files.push_back(std::move(file));
  }
  if (summary.empty()) throw HubRefusal(400, "", "the commit needs a header line with a summary");
  return files;
}

void commit(Frontend& fe, Exchange& ex, const std::string& id, const std::string& revision) {
  PushedRepo& repo = writable_repo(fe, ex, id);
  const QueryParams query(ex.query);
  const bool create_pr = query.get("create_pr").value_or("") == "1";
  std::string summary;
  const std::vector<HubCommitFile> files = commit_files(ex.body, summary);
  int pr = 0;
  const std::string oid = fe.hub_store.commit(repo, revision, create_pr, summary, files, pr);
  json::object answer;
  answer["success"] = true;
  answer["commitOid"] = oid;
  answer["commitUrl"] = fe.base_url + "/" + repo.id + "/commit/" + oid;
  if (create_pr) {
    answer["pullRequestUrl"] = fe.base_url + "/" + repo.id + "/discussions/" + std::to_string(pr);
    answer["pullRequestRevision"] = "refs/pr/" + std::to_string(pr);
  }
  ex.reply.json_text(json::serialize(answer));
}

json::object lfs_action(const Frontend& fe, const std::string& token, const PendingLfsUpload& upload) {
  json::object action;
  action["href"] = fe.base_url + std::string(kLfsUploads) + token;
  if (upload.chunk_size != 0) {
    json::object header;
    header["chunk_size"] = std::to_string(upload.chunk_size);
    const std::uint64_t parts = (upload.size + upload.chunk_size - 1) / upload.chunk_size;
    for (std::uint64_t part = 1; part <= parts; ++part) {
      header[std::to_string(part)] = fe.base_url + std::string(kLfsUploads) + token + "?part=" + std::to_string(part);
    }
    action["header"] = std::move(header);
  }
  return action;
}

void lfs_batch(Frontend& fe, Exchange& ex, const std::string& id) {
  writable_repo(fe, ex, id);
  const json::object request = parse_object(ex.body);
  const auto* objects = request.if_contains("objects");
  if (string_field(request, "operation") != "upload" || objects == nullptr || !objects->is_array()) {
    throw HubRefusal(400, "", "expected an upload batch with \"objects\"");
  }
  json::array answered;
  for (const json::value& item : objects->as_array()) {
    if (!item.is_object()) throw HubRefusal(400, "", "each object must be an object");
    const std::string oid = string_field(item.as_object(), "oid");
    const std::uint64_t size = size_field(item.as_object(), "size");
    json::object object;
    object["oid"] = oid;
    object["size"] = size;
    object["authenticated"] = true;
    if (!fe.hub_store.has_lfs_object(oid)) {
      PendingLfsUpload upload;
      upload.size = size;
      upload.chunk_size = size > kMultipartChunk ? kMultipartChunk : 0;
      const std::string token = fe.hub_store.begin_upload(oid, size, upload.chunk_size);
      json::object actions;
      actions["upload"] = lfs_action(fe, token, upload);
      json::object verify;
      verify["href"] = fe.base_url + "/" + id + ".git/info/lfs/objects/verify";
      actions["verify"] = std::move(verify);
      object["actions"] = std::move(actions);
    }
    answered.push_back(std::move(object));
  }
  json::object answer;
  answer["transfer"] = "basic";
  answer["objects"] = std::move(answered);
  ex.reply.json_text(json::serialize(answer));
  ex.reply.content_type.assign("application/vnd.git-lfs+json");
}

void lfs_verify(Frontend& fe, Exchange& ex, const std::string& id) {
  writable_repo(fe, ex, id);
  const json::object request = parse_object(ex.body);
  if (!fe.hub_store.has_lfs_object(string_field(request, "oid"))) throw HubRefusal(404, "", "object not found");
  ex.reply.json_text("{}");
}

// /api/models/{namespace}/{name}[/{action}/{revision...}]
void models_api(Frontend& fe, Exchange& ex, const std::vector<std::string>& s) {
  if (s.size() < 4) throw HubRefusal(404, "", "Not Found");
  const std::string id = s[2] + "/" + s[3];
  std::string revision;
  for (std::size_t i = 5; i < s.size(); ++i) revision += (i == 5 ? "" : "/") + s[i];
  const std::string_view method = ex.request.method_string();
  const std::string action = s.size() > 4 ? s[4] : "";
  if (method == "GET" && action.empty()) return repo_info(fe, ex, id, "main");
  if (method == "GET" && action == "revision" && !revision.empty()) return repo_info(fe, ex, id, revision);
  if (method != "POST" || revision.empty()) throw HubRefusal(404, "", "Not Found");
  if (action == "preupload") return preupload(fe, ex, id);
  if (action == "commit") return commit(fe, ex, id, revision);
  if (action == "branch") return create_branch(fe, ex, id, revision);
  throw HubRefusal(404, "", "Not Found");
}

void dispatch(Frontend& fe, Exchange& ex) {
  const std::string_view path = ex.path;
  const std::string_view method = ex.request.method_string();
  if (path == "/api/whoami-v2" && method == "GET") return whoami(fe, ex);
  if (path == "/api/repos/create" && method == "POST") return create_repo(fe, ex);
  const std::vector<std::string> s = segments(path);
  if (s.size() >= 2 && s[0] == "api" && s[1] == "models") return models_api(fe, ex, s);
  // /{namespace}/{name}.git/info/lfs/objects/{batch|verify}
  if (s.size() == 6 && s[1].ends_with(".git") && s[2] == "info" && s[3] == "lfs" && s[4] == "objects" &&
      method == "POST") {
    const std::string id = s[0] + "/" + s[1].substr(0, s[1].size() - 4);
    if (s[5] == "batch") return lfs_batch(fe, ex, id);
    if (s[5] == "verify") return lfs_verify(fe, ex, id);
  }
  throw HubRefusal(404, "", "Not Found");
}

}  // namespace

std::string hub_account(Frontend& fe, const Exchange& ex) {
  constexpr std::string_view bearer = "Bearer ";
  const std::string_view value = ex.header("Authorization");
  if (!value.starts_with(bearer)) return "";
  const auto principal = fe.authenticator.authenticate(value.substr(bearer.size()), fe.engine.clock().now());
  return principal ? HubStore::account_for(principal->user_id) : std::string();
}

void handle_hub_api(Frontend& fe, Exchange& ex) {
  try {
    dispatch(fe, ex);
  } catch (const HubRefusal& refusal) {
    refuse(ex.reply, refusal);
  } catch (const BadQuery& e) {
    refuse(ex.reply, HubRefusal(400, "", e.what()));
  }
}

void handle_hub_lfs(Frontend& fe, Exchange& ex) {
  try {
    const std::string token = percent_decode(ex.path.substr(kLfsUploads.size()));
    const QueryParams query(ex.query);
    const std::string_view method = ex.request.method_string();
    if (method == "PUT") {
      const auto part = static_cast<int>(query.get_int("part", 0, 0, 10'000));
      ex.reply.headers.emplace_back("ETag", fe.hub_store.put(token, part, std::string(ex.body)));
      ex.reply.status = 200;
      return;
    }
    if (method == "POST") {
      fe.hub_store.complete(token);
      ex.reply.json_text("{}");
      return;
    }
    throw HubRefusal(405, "", "Method Not Allowed");
  } catch (const HubRefusal& refusal) {
    refuse(ex.reply, refusal);
  } catch (const BadQuery& e) {
    refuse(ex.reply, HubRefusal(400, "", e.what()));
  }
}

}  // namespace tinker::local::front
