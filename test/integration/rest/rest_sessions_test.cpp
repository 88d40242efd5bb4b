// RestClient's session, sampler, audit and billing calls against in-process tinker-local.
#include "integration/rest/rest_support.hpp"

#include <tinker/sampling_client.hpp>

#include <gtest/gtest.h>

#include <algorithm>

namespace tinker::test {
namespace {

namespace asio = boost::asio;

asio::awaitable<std::string> open_session(std::shared_ptr<detail::ClientHolder> holder) {
  diagnostics diag;
  const boost::system::error_code ec = co_await holder->ensure_session(diag);
  if (ec) throw error(ec, diag);
  co_return holder->session_id();
}

class RestSessions : public RestService {
 protected:
  local::ServerOptions server_options() const override {
    auto options = fast_server_options();
    options.trace_export_pending_polls = 3;
    return options;
  }
};

TEST_F(RestSessions, EveryPageOfSessionsIsFetchedNewestFirst) {
  std::vector<std::unique_ptr<ServiceClient>> services;
  std::vector<std::string> opened;
  for (int i = 0; i < 7; ++i) {
    services.push_back(make_fast_service());
    opened.push_back(run(open_session(services.back()->holder())));
  }
  std::reverse(opened.begin(), opened.end());
  RestClient rest = services.front()->create_rest_client();

  ListAllOptions options;
  options.page_size = 3;  // pages of 3, 3 and 1
  auto all = rest.async_list_all_sessions(options, asio::use_future);
  EXPECT_EQ(run_until_ready(io, all), opened);
  EXPECT_EQ(requests_to(server->audit(), "/api/v1/sessions").size(), 3u);

  options.page_size = 7;  // one full page: without a cursor only an empty page ends the listing
  auto exact = rest.async_list_all_sessions(options, asio::use_future);
  EXPECT_EQ(run_until_ready(io, exact), opened);
  EXPECT_EQ(requests_to(server->audit(), "/api/v1/sessions").size(), 5u);

  auto page = rest.async_list_sessions(ListSessionsOptions(2, 1), asio::use_future);
  const std::vector<std::string> expected{opened[1], opened[2]};
  EXPECT_EQ(run_until_ready(io, page).sessions, expected);
}

TEST_F(RestSessions, ASessionShowsItsRunsAndSamplersAndMovesToAProject) {
  auto service = make_fast_service();
  const RunWithCheckpoints made = run(make_run(*service, {"s"}));
  const SamplingSource source = SamplingSource::from_model_path(made.sampler_path);
  auto creating = service->async_create_sampling_client(source, asio::use_future);
  const SamplingClient sampler = run_until_ready(io, creating);
  RestClient rest = service->create_rest_client();
  const std::string session_id = service->holder()->session_id();

  auto got = rest.async_get_session(session_id, AccessScope::owned, asio::use_future);
  const GetSessionResponse session = run_until_ready(io, got);
  EXPECT_EQ(session.training_run_ids, std::vector<std::string>{made.run_id});
  EXPECT_NE(std::find(session.sampler_ids.begin(), session.sampler_ids.end(), sampler.sampling_session_id()),
            session.sampler_ids.end());

  auto sampler_info = rest.async_get_sampler(sampler.sampling_session_id(), asio::use_future);
  const GetSamplerResponse info = run_until_ready(io, sampler_info);
  EXPECT_EQ(info.base_model, tiny_model);
  EXPECT_EQ(info.model_path, made.sampler_path);

  auto assign = rest.async_assign_session_project(session_id, "project-7", asio::use_future);
  run_until_ready(io, assign);
  diagnostics diag;
  auto unknown = rest.async_assign_session_project("no-such-session", "project-7", diag, asio::use_future);
  EXPECT_EQ(failure_of(io, unknown), errc::not_found);
  EXPECT_EQ(diag.http_status, 404);
  diagnostics empty_diag;
  auto empty = rest.async_assign_session_project(session_id, "", empty_diag, asio::use_future);
  EXPECT_EQ(failure_of(io, empty), errc::bad_request);
  EXPECT_NE(empty_diag.message.find("project_id"), std::string::npos) << empty_diag.message;
}

TEST_F(RestSessions, TraceExportIsPolledUntilReady) {
  auto service = make_fast_service();
  run(make_run(*service, {}));
  RestClient rest = service->create_rest_client();
  auto exporting = rest.async_export_session_trace(service->holder()->session_id(), asio::use_future);
  const TraceExportResponse ready = run_until_ready(io, exporting);
  EXPECT_EQ(ready.status, TraceExportStatus::ready);
  ASSERT_TRUE(ready.url.has_value());
  EXPECT_EQ(ready.url->rfind(server->base_url() + "/_downloads/", 0), 0u) << *ready.url;
  EXPECT_EQ(requests_to(server->audit(), "/trace_export").size(), 4u) << "three pending answers, then ready";
}

TEST_F(RestSessions, TheAuditLogRecordsCheckpointEvents) {
  auto service = make_fast_service();
  const RunWithCheckpoints made = run(make_run(*service, {"gone"}));
  RestClient rest = service->create_rest_client();
  auto deleting = rest.async_delete_checkpoint_from_tinker_path(made.training_paths[0], asio::use_future);
  run_until_ready(io, deleting);

  const auto today =
      std::chrono::year_month_day(std::chrono::floor<std::chrono::days>(std::chrono::system_clock::now()));
  auto log = rest.async_get_audit_log(AuditLogOptions(AuditEventType::checkpoints, today), asio::use_future);
  const AuditLogResponse entries = run_until_ready(io, log);
  const auto deleted = std::find_if(entries.entries.begin(), entries.entries.end(),
                                    [](const AuditLogEntry& e) { return e.event == "checkpoint.delete"; });
  ASSERT_NE(deleted, entries.entries.end());
  EXPECT_EQ(deleted->tinker_path, made.training_paths[0]);

  diagnostics diag;
  const AuditLogOptions bad_day(AuditEventType::all, std::chrono::year_month_day(std::chrono::year(2026) / 2 / 30));
  auto bad = rest.async_get_audit_log(bad_day, diag, asio::use_future);
  EXPECT_EQ(failure_of(io, bad), errc::invalid_argument);
  EXPECT_NE(diag.message.find("day"), std::string::npos) << diag.message;
  EXPECT_EQ(requests_to(server->audit(), "/api/v1/audit").size(), 1u);
}

TEST_F(RestSessions, BillingUsageCoversTheCurrentHour) {
  auto service = make_fast_service();
  run(make_run(*service, {"billed"}));
  RestClient rest = service->create_rest_client();
  // The previous and the current hour, so that a run crossing the hour is still covered.
  const auto hour = std::chrono::floor<std::chrono::hours>(std::chrono::system_clock::now());
  const Timestamp start = std::chrono::time_point_cast<std::chrono::microseconds>(hour - std::chrono::hours(1));
  auto usage = rest.async_get_billing_usage(start, start + std::chrono::hours(2), asio::use_future);
  const BillingUsageResponse response = run_until_ready(io, usage);
  const auto checkpoint = std::find_if(response.data.begin(), response.data.end(), [](const BillingUsageEntry& e) {
    return std::holds_alternative<billing::CheckpointEvent>(e.event_info);
  });
  ASSERT_NE(checkpoint, response.data.end());
  EXPECT_EQ(checkpoint->session_id, service->holder()->session_id());
  EXPECT_GE(checkpoint->bucket_start, start);
  EXPECT_EQ(checkpoint->bucket_end - checkpoint->bucket_start, std::chrono::hours(1));

  diagnostics diag;
  auto unaligned = rest.async_get_billing_usage(start + std::chrono::minutes(5), start + std::chrono::hours(1), diag,
                                                asio::use_future);
  EXPECT_EQ(failure_of(io, unaligned), errc::bad_request);
  EXPECT_NE(diag.message.find("starting_on"), std::string::npos) << diag.message;
}

}  // namespace
}  // namespace tinker::test
