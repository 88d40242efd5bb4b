#include "programs/local/server/router.hpp"

#include <gtest/gtest.h>

namespace tinker::local::front {
namespace {

using Status = Route::Status;

TEST(RouterTest, MatchesEveryFixedApiEndpoint) {
  struct Case {
    const char* method;
    const char* path;
    Endpoint endpoint;
  };
  const Case cases[] = {
      {"GET", "/api/v1/healthz", Endpoint::healthz},
      {"GET", "/api/v1/get_server_capabilities", Endpoint::get_server_capabilities},
      {"POST", "/api/v1/auth/token", Endpoint::auth_token},
      {"POST", "/api/v1/client/config", Endpoint::client_config},
      {"POST", "/api/v1/client/dynamic_config", Endpoint::dynamic_config},
      {"POST", "/api/v1/create_session", Endpoint::create_session},
      {"POST", "/api/v1/session_heartbeat", Endpoint::session_heartbeat},
      {"POST", "/api/v1/create_sampling_session", Endpoint::create_sampling_session},
      {"POST", "/api/v1/create_model", Endpoint::create_model},
      {"POST", "/api/v1/get_info", Endpoint::get_info},
      {"POST", "/api/v1/unload_model", Endpoint::unload_model},
      {"POST", "/api/v1/forward_backward", Endpoint::forward_backward},
      {"POST", "/api/v1/forward", Endpoint::forward},
      {"POST", "/api/v1/optim_step", Endpoint::optim_step},
      {"POST", "/api/v1/save_weights", Endpoint::save_weights},
      {"POST", "/api/v1/load_weights", Endpoint::load_weights},
      {"POST", "/api/v1/save_weights_for_sampler", Endpoint::save_weights_for_sampler},
      {"POST", "/api/v1/asample", Endpoint::asample},
      {"POST", "/api/v1/retrieve_future", Endpoint::retrieve_future},
      {"POST", "/api/v1/telemetry", Endpoint::telemetry},
      {"GET", "/api/v1/training_runs", Endpoint::list_training_runs},
      {"GET", "/api/v1/checkpoints", Endpoint::list_user_checkpoints},
      {"POST", "/api/v1/weights_info", Endpoint::weights_info},
      {"GET", "/api/v1/sessions", Endpoint::list_sessions},
      {"GET", "/api/v1/audit", Endpoint::audit_log},
      {"GET", "/api/v1/billing/usage/events", Endpoint::billing_usage},
      {"GET", "/_admin/audit", Endpoint::admin_audit},
      {"GET", "/_admin/requests", Endpoint::admin_requests},
      {"POST", "/_admin/faults", Endpoint::admin_set_faults},
      {"DELETE", "/_admin/faults", Endpoint::admin_clear_faults},
      {"POST", "/_admin/clock/advance", Endpoint::admin_advance_clock},
  };
  for (const Case& c : cases) {
    const Route route = match_route(c.method, c.path);
    EXPECT_EQ(route.status, Status::ok) << c.method << " " << c.path;
    EXPECT_EQ(route.endpoint, c.endpoint) << c.method << " " << c.path;
  }
}

TEST(RouterTest, RunIdsKeepTheirColons) {
  const Route run = match_route("GET", "/api/v1/training_runs/5d6f-aa:train:0");
  ASSERT_EQ(run.status, Status::ok);
  EXPECT_EQ(run.endpoint, Endpoint::get_training_run);
  EXPECT_EQ(run.run_id, "5d6f-aa:train:0");

  const Route list = match_route("GET", "/api/v1/training_runs/s:train:12/checkpoints");
  ASSERT_EQ(list.status, Status::ok);
  EXPECT_EQ(list.endpoint, Endpoint::list_run_checkpoints);
  EXPECT_EQ(list.run_id, "s:train:12");
}

TEST(RouterTest, CheckpointIdsContainASlash) {
  const Route del = match_route("DELETE", "/api/v1/training_runs/s:train:0/checkpoints/weights/step-0100");
  ASSERT_EQ(del.status, Status::ok);
  EXPECT_EQ(del.endpoint, Endpoint::delete_checkpoint);
  EXPECT_EQ(del.run_id, "s:train:0");
  EXPECT_EQ(del.checkpoint_id, "weights/step-0100");

  const Route archive = match_route("GET", "/api/v1/training_runs/s:train:0/checkpoints/weights/step-0100/archive");
  ASSERT_EQ(archive.status, Status::ok);
  EXPECT_EQ(archive.endpoint, Endpoint::checkpoint_archive);
  EXPECT_EQ(archive.checkpoint_id, "weights/step-0100");

  const Route publish = match_route("POST", "/api/v1/training_runs/r/checkpoints/sampler_weights/final/publish");
  ASSERT_EQ(publish.status, Status::ok);
  EXPECT_EQ(publish.endpoint, Endpoint::publish_checkpoint);
  EXPECT_EQ(publish.checkpoint_id, "sampler_weights/final");

  const Route unpublish = match_route("DELETE", "/api/v1/training_runs/r/checkpoints/sampler_weights/final/publish");
  ASSERT_EQ(unpublish.status, Status::ok);
  EXPECT_EQ(unpublish.endpoint, Endpoint::unpublish_checkpoint);

  const Route ttl = match_route("PUT", "/api/v1/training_runs/r/checkpoints/weights/a.b-c_d/ttl");
  ASSERT_EQ(ttl.status, Status::ok);
  EXPECT_EQ(ttl.endpoint, Endpoint::set_checkpoint_ttl);
  EXPECT_EQ(ttl.checkpoint_id, "weights/a.b-c_d");
}

TEST(RouterTest, ACheckpointNamedLikeAnActionIsStillACheckpoint) {
  const Route del = match_route("DELETE", "/api/v1/training_runs/r/checkpoints/weights/archive");
  ASSERT_EQ(del.status, Status::ok);
  EXPECT_EQ(del.endpoint, Endpoint::delete_checkpoint);
  EXPECT_EQ(del.checkpoint_id, "weights/archive");

  const Route archive = match_route("GET", "/api/v1/training_runs/r/checkpoints/weights/archive/archive");
  ASSERT_EQ(archive.status, Status::ok);
  EXPECT_EQ(archive.endpoint, Endpoint::checkpoint_archive);
  EXPECT_EQ(archive.checkpoint_id, "weights/archive");
}

TEST(RouterTest, PercentEncodedSegmentsAreDecodedAfterSplitting) {
  const Route archive = match_route("GET", "/api/v1/training_runs/s%3Atrain%3A0/checkpoints/weights%2Fstep-1/archive");
  ASSERT_EQ(archive.status, Status::ok);
  EXPECT_EQ(archive.endpoint, Endpoint::checkpoint_archive);
  EXPECT_EQ(archive.run_id, "s:train:0");
  EXPECT_EQ(archive.checkpoint_id, "weights/step-1");
  EXPECT_EQ(percent_decode("a%2"), "a%2");
  EXPECT_EQ(percent_decode("%zz%41"), "%zzA");
}

TEST(RouterTest, SessionAndSamplerPaths) {
  const Route session = match_route("GET", "/api/v1/sessions/abc-123");
  ASSERT_EQ(session.status, Status::ok);
  EXPECT_EQ(session.endpoint, Endpoint::get_session);
  EXPECT_EQ(session.session_id, "abc-123");

  const Route project = match_route("PUT", "/api/v1/sessions/abc-123/project");
  EXPECT_EQ(project.endpoint, Endpoint::assign_session_project);
  EXPECT_EQ(project.session_id, "abc-123");

  const Route trace = match_route("GET", "/api/v1/sessions/abc/trace_export");
  EXPECT_EQ(trace.endpoint, Endpoint::trace_export);

  const Route sampler = match_route("GET", "/api/v1/samplers/s:sample:3");
  ASSERT_EQ(sampler.status, Status::ok);
  EXPECT_EQ(sampler.endpoint, Endpoint::get_sampler);
  EXPECT_EQ(sampler.sampler_id, "s:sample:3");

  const Route download = match_route("GET", "/_downloads/tok123.tar");
  ASSERT_EQ(download.status, Status::ok);
  EXPECT_EQ(download.endpoint, Endpoint::download);
  EXPECT_EQ(download.token, "tok123.tar");
}

TEST(RouterTest, UnknownPathsAreNotFound) {
  for (const char* path : {"/", "/api/v1/", "/api/v1/nope", "/api/v2/healthz", "/api/v1/healthz/x",
                           "/api/v1/training_runs/r/checkpoints/weights/a/b/c", "/api/v1/training_runs//checkpoints",
                           "/api/v1/training_runs/r/other", "/api/v1/sessions/s/unknown", "/_downloads/",
                           "/_downloads/a/b", "/_admin/nothing", "/api/v1/training_runs/r/checkpoints/weights/a/zip"}) {
    EXPECT_EQ(match_route("GET", path).status, Status::not_found) << path;
  }
}

TEST(RouterTest, HubUploadPathsGoToTheHubApi) {
  for (const char* path : {"/api/whoami-v2", "/api/repos/create", "/api/models/u/r/commit/main", "/api/models/u/r",
                           "/u/r.git/info/lfs/objects/batch"}) {
    const Route route = match_route("POST", path);
    EXPECT_EQ(route.status, Status::ok) << path;
    EXPECT_EQ(route.endpoint, Endpoint::hub_api) << path;
    EXPECT_TRUE(is_hub_path(path)) << path;
  }
  const Route upload = match_route("PUT", "/_hub_lfs/abc");
  EXPECT_EQ(upload.endpoint, Endpoint::hub_lfs);
  EXPECT_TRUE(is_hub_path("/_hub_lfs/abc"));
  EXPECT_EQ(match_route("PUT", "/_hub_lfs/").status, Status::not_found);
  EXPECT_EQ(match_route("GET", "/api/other").status, Status::not_found);
}

TEST(RouterTest, WrongMethodsAreNotAllowedWithAnAllowList) {
  const Route healthz = match_route("POST", "/api/v1/healthz");
  EXPECT_EQ(healthz.status, Status::method_not_allowed);
  EXPECT_EQ(healthz.allow, "GET");

  const Route create = match_route("GET", "/api/v1/create_model");
  EXPECT_EQ(create.status, Status::method_not_allowed);
  EXPECT_EQ(create.allow, "POST");

  const Route publish = match_route("PUT", "/api/v1/training_runs/r/checkpoints/weights/a/publish");
  EXPECT_EQ(publish.status, Status::method_not_allowed);
  EXPECT_EQ(publish.allow, "POST, DELETE");

  const Route faults = match_route("GET", "/_admin/faults");
  EXPECT_EQ(faults.status, Status::method_not_allowed);
  EXPECT_EQ(faults.allow, "POST, DELETE");

  EXPECT_EQ(match_route("POST", "/api/v1/training_runs/r").status, Status::method_not_allowed);
  EXPECT_EQ(match_route("POST", "/_downloads/t").status, Status::method_not_allowed);
}

TEST(RouterTest, AuthenticationPolicy) {
  EXPECT_FALSE(requires_api_key(Endpoint::healthz));
  EXPECT_TRUE(requires_api_key(Endpoint::client_config));
  EXPECT_TRUE(requires_api_key(Endpoint::billing_usage));
  EXPECT_FALSE(requires_api_key(Endpoint::download));
  EXPECT_FALSE(requires_api_key(Endpoint::admin_audit));
  EXPECT_TRUE(is_admin(Endpoint::admin_advance_clock));
  EXPECT_FALSE(is_admin(Endpoint::download));
}

TEST(RouterTest, QueryParameters) {
  const auto [path, query] = split_target("/api/v1/training_runs?limit=5&offset=10&access_scope=accessible&x=a%20b+c");
  EXPECT_EQ(path, "/api/v1/training_runs");
  const QueryParams params(query);
  EXPECT_EQ(params.get_int("limit", 20, 0, 100), 5);
  EXPECT_EQ(params.get_int("offset", 0, 0, 100), 10);
  EXPECT_EQ(params.get_int("missing", 7, 0, 100), 7);
  EXPECT_EQ(params.get("access_scope"), "accessible");
  EXPECT_EQ(params.get("x"), "a b c");
  EXPECT_FALSE(params.get("nope").has_value());

  const auto [bare_path, bare_query] = split_target("/api/v1/sessions");
  EXPECT_EQ(bare_path, "/api/v1/sessions");
  EXPECT_TRUE(bare_query.empty());
}

TEST(RouterTest, BadQueryParametersNameTheParameter) {
  const QueryParams params("limit=abc&offset=-1&big=99999999999999999999");
  try {
    params.get_int("limit", 20, 0, 100);
    FAIL() << "no exception";
  } catch (const BadQuery& e) {
    EXPECT_NE(std::string(e.what()).find("limit"), std::string::npos) << e.what();
  }
  EXPECT_THROW(params.get_int("offset", 0, 0, 100), BadQuery);
  EXPECT_THROW(params.get_int("big", 0, 0, 100), BadQuery);
  EXPECT_THROW(QueryParams("a=%zz"), BadQuery);
}

}  // namespace
}  // namespace tinker::local::front
