// The REST management endpoints of /api/v1/ (doc/rest.md, doc/local.md#what-it-serves).
#include "programs/local/server/frontend.hpp"
#include "programs/local/server/http_dates.hpp"

#include <limits>

namespace tinker::local::front {
namespace {

constexpr std::int64_t kMaxLimit = 10'000;
constexpr std::int64_t kMaxOffset = std::numeric_limits<std::int32_t>::max();

void no_content(Exchange& ex) {
  ex.reply.status = 204;
  ex.reply.content_type.clear();
  ex.reply.body.clear();
}

// access_scope: "owned" (default) or "accessible" (also runs with a public checkpoint).
std::string_view access_scope(const QueryParams& query) {
  const std::string_view scope = query.get("access_scope").value_or("owned");
  if (scope != "owned" && scope != "accessible") {
    throw BadQuery("query parameter access_scope: expected \"owned\" or \"accessible\", got \"" + std::string(scope) +
                   "\"");
  }
  return scope;
}

void archive(Frontend& fe, Exchange& ex) {
  const ArchiveLocation location = fe.engine.checkpoint_archive(ex.route.run_id, ex.route.checkpoint_id, ex.principal);
  std::string url = fe.base_url + "/_downloads/" + location.token;
  if (fe.options.archive_json_form) {
    const Timestamp expires = std::chrono::floor<std::chrono::microseconds>(location.expires);
    ex.reply.json(CheckpointArchiveUrlResponse(std::move(url), expires));
    return;
  }
  // The current contract (doc/rest.md#checkpoint-downloads): the client must see this raw 302.
  ex.reply.status = 302;
  ex.reply.content_type.clear();
  ex.reply.body.clear();
  ex.reply.headers.emplace_back("Location", std::move(url));
  ex.reply.headers.emplace_back("Expires", http_date(location.expires));
}

void dispatch_rest(Frontend& fe, Exchange& ex, const QueryParams& query) {
  Engine& engine = fe.engine;
  const Principal& who = ex.principal;
  const Route& route = ex.route;
  switch (route.endpoint) {
    case Endpoint::list_training_runs: {
      const std::int64_t limit = query.get_int("limit", 20, 0, kMaxLimit);
      const std::int64_t offset = query.get_int("offset", 0, 0, kMaxOffset);
      return ex.reply.json(engine.list_training_runs(limit, offset, access_scope(query), who));
    }
    case Endpoint::get_training_run:
      return ex.reply.json(engine.get_training_run(route.run_id, access_scope(query), who));
    case Endpoint::list_run_checkpoints: return ex.reply.json(engine.list_run_checkpoints(route.run_id, who));
    case Endpoint::delete_checkpoint:
      engine.delete_checkpoint(route.run_id, route.checkpoint_id, who);
      return no_content(ex);
    case Endpoint::checkpoint_archive: return archive(fe, ex);
    case Endpoint::publish_checkpoint:
      engine.publish_checkpoint(route.run_id, route.checkpoint_id, who);
      return no_content(ex);
    case Endpoint::unpublish_checkpoint:
      engine.unpublish_checkpoint(route.run_id, route.checkpoint_id, who);
      return no_content(ex);
    case Endpoint::set_checkpoint_ttl: {
      SetCheckpointTtlRequest request;
      if (!decode_json(ex, request)) return;
      engine.set_checkpoint_ttl(route.run_id, route.checkpoint_id, request, who);
      return no_content(ex);
    }
    case Endpoint::list_user_checkpoints: {
      const std::int64_t limit = query.get_int("limit", 100, 0, kMaxLimit);
      const std::int64_t offset = query.get_int("offset", 0, 0, kMaxOffset);
      return ex.reply.json(engine.list_user_checkpoints(limit, offset, who));
    }
    case Endpoint::weights_info: {
      WeightsInfoRequest request;
      if (!decode_json(ex, request)) return;
      return ex.reply.json(engine.weights_info(request, who));
    }
    case Endpoint::list_sessions: {
      const std::int64_t limit = query.get_int("limit", 20, 0, kMaxLimit);
      const std::int64_t offset = query.get_int("offset", 0, 0, kMaxOffset);
      access_scope(query);  // validated; sessions are always the caller's own
      return ex.reply.json(engine.list_sessions(limit, offset, who));
    }
    case Endpoint::get_session: return ex.reply.json(engine.get_session(route.session_id, who));
    case Endpoint::search_sessions: {
      SessionSearchRequest request;
      if (!decode_json(ex, request)) return;
      return ex.reply.json(engine.search_sessions(request, who));
    }
    case Endpoint::finish_session: {
      FinishSessionRequest request;
      if (!decode_json(ex, request)) return;
      engine.finish_session(request, who);
      return ex.reply.json_text("{}");
    }
    case Endpoint::assign_session_project: {
      AssignSessionProjectRequest request;
      if (!decode_json(ex, request)) return;
      engine.assign_session_project(route.session_id, request, who);
      return no_content(ex);
    }
    case Endpoint::trace_export: return ex.reply.json(engine.trace_export(route.session_id, fe.base_url, who));
    case Endpoint::get_sampler: return ex.reply.json(engine.get_sampler(route.sampler_id, who));
    case Endpoint::audit_log: {
      const std::int64_t limit = query.get_int("limit", 100, 0, kMaxLimit);
      const std::int64_t offset = query.get_int("offset", 0, 0, kMaxOffset);
      return ex.reply.json(engine.audit_log(limit, offset, who));
    }
    case Endpoint::billing_usage: {
      // The protocol names them starting_on / ending_before; start_time / end_time are accepted too.
      const std::string_view start = query.get("starting_on").value_or(query.get("start_time").value_or(""));
      const std::string_view end = query.get("ending_before").value_or(query.get("end_time").value_or(""));
      return ex.reply.json(engine.billing_usage(start, end, who));
    }
    case Endpoint::search_checkpoints: {
      CheckpointSearchRequest request;
      if (!decode_json(ex, request)) return;
      return ex.reply.json(engine.search_checkpoints(request, who));
    }
    case Endpoint::copy_weights: {
      CopyWeightsRequest request;
      if (!decode_json(ex, request)) return;
      return ex.reply.json(engine.copy_weights(request, who));
    }
    case Endpoint::checkpoint_storage_usage: {
      std::optional<std::string> project_id;
      if (auto value = query.get("project_id")) project_id = std::string(*value);
      return ex.reply.json(engine.checkpoint_storage_usage(project_id, who));
    }
    case Endpoint::external_weights_urls:
    case Endpoint::external_weights_upload_start:
    case Endpoint::external_weights_upload_finish: return handle_external_weights_api(fe, ex);
    default: return ex.reply.error(404, "Not Found");
  }
}

}  // namespace

void handle_rest(Frontend& fe, Exchange& ex) {
  QueryParams query;
  try {
    query = QueryParams(ex.query);
  } catch (const BadQuery& e) {
    return ex.reply.error(422, e.what());
  }
  try {
    dispatch_rest(fe, ex, query);
  } catch (const HttpError& e) {
    ex.reply.error(e.status(), e.what());
  } catch (const BadQuery& e) {  // a query parameter (named in the message)
    ex.reply.error(422, e.what());
  } catch (const std::exception& e) {
    fe.logger.error(std::string("internal error in ") + endpoint_name(ex.route.endpoint) + ": " + e.what());
    ex.reply.error(500, "internal server error");
  }
}

}  // namespace tinker::local::front
