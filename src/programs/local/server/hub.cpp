// GET/HEAD /{org}/{name}/resolve/{revision}/{file}: the Hugging Face Hub's file download, for the
// tokenizers tinker-local installs, so HF_ENDPOINT=<tinker-local> exercises a client's Hub path.
//
// As the Hub answers (choices where it differs are noted):
//  * 200 with the bytes, X-Repo-Commit: <commit>, ETag: "<git blob id>" (quoted), Content-Length;
//    no redirect (the Hub redirects large files to a CDN; these are small). A Range gets 206.
//  * The revision is "main" or the full commit; anything else 404 with X-Error-Code
//    RevisionNotFound. An unknown repo 404 RepoNotFound; an absent file 404 EntryNotFound with
//    X-Repo-Commit (the Hub sends both).
//  * Repos pushed through the upload API (hub_upload.cpp) are served from the HubStore: the
//    revision is a branch, "refs/pr/N" or a commit id; a private repo answers 401 RepoNotFound
//    without a token and 404 RepoNotFound to another account's token, as the Hub does; LFS
//    files carry their SHA-256 as ETag (the Hub's X-Linked-Etag) and are served directly.
//  * With ServerOptions::hub_requires_token, a request without "Authorization: Bearer <key>" of
//    an accepted API key is 401 (the Hub's answer to a gated repo without a token). The value is
//    never logged or echoed.
#include "programs/local/server/frontend.hpp"
#include "programs/local/server/header_values.hpp"

namespace tinker::local::front {
namespace {

void not_found(Reply& reply, std::string_view code, std::string_view message) {
  reply.error(404, message);
  reply.headers.emplace_back("X-Error-Code", std::string(code));
  reply.headers.emplace_back("X-Error-Message", std::string(message));
}

bool authorized(Frontend& fe, const Exchange& ex) {
  if (!fe.options.hub_requires_token) return true;
  constexpr std::string_view bearer = "Bearer ";
  const std::string_view value = ex.header("Authorization");
  if (!value.starts_with(bearer)) return false;
  return fe.authenticator.authenticate(value.substr(bearer.size()), fe.engine.clock().now()).has_value();
}

// A single byte range is honoured (206, or 416 past the end), as the Hub's storage does, so a
// cut-off download continues where it stopped.
void serve_file(Reply& reply, std::string_view range_header, const std::string& commit, const HubFile& file) {
  reply.headers.emplace_back("X-Repo-Commit", commit);
  reply.headers.emplace_back("ETag", "\"" + file.etag + "\"");
  reply.headers.emplace_back("Accept-Ranges", "bytes");
  reply_with_range(reply, range_header, file.bytes, "application/octet-stream");
}

void serve_pushed(Frontend& fe, Exchange& ex) {
  Reply& reply = ex.reply;
  const PushedRepo* repo = nullptr;
  try {
    repo = &fe.hub_store.visible_repo(ex.route.repo, hub_account(fe, ex));
  } catch (const HubRefusal& refusal) {
    reply.error(refusal.status(), refusal.what());
    reply.headers.emplace_back("X-Error-Code", refusal.code());
    reply.headers.emplace_back("X-Error-Message", refusal.what());
    return;
  }
  const HubCommit* commit = repo->resolve(ex.route.revision);
  if (commit == nullptr) return not_found(reply, "RevisionNotFound", "Invalid rev id: " + ex.route.revision);
  const auto file = commit->files.find(ex.route.file);
  if (file == commit->files.end()) {
    not_found(reply, "EntryNotFound", "Entry not found");
    reply.headers.emplace_back("X-Repo-Commit", commit->id);
    return;
  }
  serve_file(reply, ex.header("Range"), commit->id, file->second);
}

}  // namespace

void handle_hub(Frontend& fe, Exchange& ex) {
  Reply& reply = ex.reply;
  if (fe.hub_store.find(ex.route.repo) != nullptr) return serve_pushed(fe, ex);
  if (!authorized(fe, ex)) {
    reply.error(401, "Invalid credentials in Authorization header");
    reply.headers.emplace_back("X-Error-Message", "Invalid credentials in Authorization header");
    return;
  }
  const auto repo = fe.hub_repos.find(ex.route.repo);
  if (repo == fe.hub_repos.end()) return not_found(reply, "RepoNotFound", "Repository not found");
  if (ex.route.revision != "main" && ex.route.revision != repo->second.commit) {
    return not_found(reply, "RevisionNotFound", "Invalid rev id: " + ex.route.revision);
  }
  const auto file = repo->second.files.find(ex.route.file);
  if (file == repo->second.files.end()) {
    not_found(reply, "EntryNotFound", "Entry not found");
    reply.headers.emplace_back("X-Repo-Commit", repo->second.commit);
    return;
  }
  serve_file(reply, ex.header("Range"), repo->second.commit, file->second);
}

}  // namespace tinker::local::front
