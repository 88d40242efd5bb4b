// Session display names, finishing, statuses and search through the public API against tinker-local,
// async and blocking (doc/service.md#finishing-a-session, doc/rest.md#search-sessions).
#include "integration/rest/rest_support.hpp"
#include "integration/sync/sync_support.hpp"

#include <tinker/sync/rest_client.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace tinker::test {
namespace {

namespace asio = boost::asio;
using Finish = ClientSessionFinishReason::Kind;

asio::awaitable<std::string> start_session(std::shared_ptr<detail::ClientHolder> holder) {
  diagnostics diag;
  const boost::system::error_code ec = co_await holder->ensure_session(diag);
  if (ec) throw error(ec, diag);
  co_return holder->session_id();
}

class SessionSearch : public RestService {
 protected:
  std::unique_ptr<ServiceClient> named_service(std::string name, std::map<std::string, std::string> metadata = {}) {
    ServiceClientOptions options(client_options());
    options.display_name = std::move(name);
    options.user_metadata = std::move(metadata);
    return make_fast_service(std::move(options));
  }
  SessionSearchResponse search(const RestClient& rest, SessionSearchRequest request) {
    auto page = rest.async_search_sessions(std::move(request), asio::use_future);
    return run_until_ready(io, page);
  }
  // The one session `session_id` as a search finds it.
  SessionSummary find(const RestClient& rest, const std::string& session_id) {
    SessionSearchRequest request;
    request.session_id = session_id;
    const SessionSearchResponse found = search(rest, request);
    if (found.sessions.size() != 1) throw std::runtime_error("session " + session_id + " not found once");
    return found.sessions.front();
  }
  // Runs the io_context until the server has seen `count` finish_session requests.
  void wait_for_finishes(std::size_t count) {
    if (io.stopped()) io.restart();  // a destroyed client may have left it without work
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (requests_to(server->audit(), "/api/v1/finish_session").size() < count &&
           std::chrono::steady_clock::now() < deadline) {
      io.run_one_for(std::chrono::milliseconds(20));
    }
    if (io.stopped()) io.restart();
  }
};

TEST_F(SessionSearch, TheDisplayNameIsSentAndFoundByWordsInAnyCase) {
  auto nightly = named_service("Nightly Qwen run", {{"team", "rl"}});
  auto other = named_service("debugging");
  auto unnamed = make_fast_service();
  const std::string nightly_id = run(start_session(nightly->holder()));
  const std::string other_id = run(start_session(other->holder()));
  run(start_session(unnamed->holder()));
  RestClient rest = nightly->create_rest_client();

  SessionSearchRequest by_name;
  by_name.display_name = "qwen NIGHTLY";
  const SessionSearchResponse found = search(rest, by_name);
  ASSERT_EQ(found.sessions.size(), 1u);
  EXPECT_EQ(found.sessions[0].session_id, nightly_id);
  EXPECT_EQ(found.sessions[0].display_name, "Nightly Qwen run");
  EXPECT_EQ(found.sessions[0].user_metadata->at("team"), "rl");
  EXPECT_EQ(found.sessions[0].status, SessionStatus::active());
  EXPECT_EQ(found.sessions[0].project_id, "default");
  EXPECT_FALSE(found.next_cursor.has_value());

  by_name.display_name = "qwen debugging";  // every word must appear
  EXPECT_TRUE(search(rest, by_name).sessions.empty());

  SessionSearchRequest either;  // id or name: either one matching is enough
  either.session_id = other_id;
  either.display_name = "nightly";
  EXPECT_EQ(search(rest, either).sessions.size(), 2u);

  SessionSearchRequest by_metadata;
  by_metadata.user_metadata = {{"team", "rl"}};
  EXPECT_EQ(search(rest, by_metadata).sessions.size(), 1u);
  by_metadata.user_metadata = {{"team", "sl"}};
  EXPECT_TRUE(search(rest, by_metadata).sessions.empty());

  SessionSearchRequest all_mine;
  EXPECT_EQ(search(rest, all_mine).sessions.size(), 3u);
  SessionSearchRequest in_project;
  in_project.project_ids = std::vector<std::string>{"elsewhere"};
  EXPECT_TRUE(search(rest, in_project).sessions.empty());
}

TEST_F(SessionSearch, EachFinishReasonIsVisibleAndTheSessionTakesNoMoreCalls) {
  const Finish reasons[] = {Finish::success, Finish::errored, Finish::interrupted};
  std::vector<std::unique_ptr<ServiceClient>> services;
  std::vector<std::string> ids;
  for (const Finish reason : reasons) {
    services.push_back(make_fast_service());
    ids.push_back(run(start_session(services.back()->holder())));
    const ClientSessionFinishReason why(reason);
    auto finishing = services.back()->async_finish_session(why, "detail of " + to_string(why), asio::use_future);
    run_until_ready(io, finishing);
  }
  RestClient rest = services.front()->create_rest_client();  // REST calls still work after finishing
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const SessionSummary summary = find(rest, ids[i]);
    const ClientSessionFinishReason why(reasons[i]);
    EXPECT_EQ(summary.status, SessionStatus::client_finished(why, "detail of " + to_string(why)));
  }

  SessionSearchRequest errored_only;
  errored_only.statuses = std::vector<SessionStatusQuery>{SessionStatusQuery::client_finished({Finish::errored})};
  const SessionSearchResponse errored = search(rest, errored_only);
  ASSERT_EQ(errored.sessions.size(), 1u);
  EXPECT_EQ(errored.sessions[0].session_id, ids[1]);
  SessionSearchRequest active_only;
  active_only.statuses = std::vector<SessionStatusQuery>{SessionStatusQuery(SessionStatusQuery::Kind::active)};
  EXPECT_TRUE(search(rest, active_only).sessions.empty());

  // The finished session refuses new work, client-side and server-side.
  diagnostics diag;
  const LoraTrainingOptions lora(std::string(tiny_model), 4);
  auto creating = services.front()->async_create_lora_training_client(lora, diag, asio::use_future);
  EXPECT_EQ(failure_of(io, creating), errc::invalid_argument);
  EXPECT_NE(diag.message.find("was finished (success)"), std::string::npos) << diag.message;
  FinishSessionRequest again(ids[0], ClientSessionFinishReason());
  auto refused = rest.async_finish_session(again, diag, asio::use_future);
  EXPECT_EQ(failure_of(io, refused), errc::bad_request);
  EXPECT_NE(diag.message.find("has ended"), std::string::npos) << diag.message;
}

TEST_F(SessionSearch, AfterFinishingTheHeartbeatStops) {
  auto service = make_fast_service();
  detail::ClientHolder::Timing timing = service->holder()->timing();
  timing.heartbeat_interval = std::chrono::milliseconds(20);
  service->holder()->set_timing(timing);
  run(start_session(service->holder()));
  io.run_for(std::chrono::milliseconds(150));
  EXPECT_GE(requests_to(server->audit(), "/api/v1/session_heartbeat").size(), 2u);
  auto finishing = service->async_finish_session(ClientSessionFinishReason(), std::nullopt, asio::use_future);
  run_until_ready(io, finishing);
  const std::size_t beats = requests_to(server->audit(), "/api/v1/session_heartbeat").size();
  io.run_for(std::chrono::milliseconds(150));
  EXPECT_EQ(requests_to(server->audit(), "/api/v1/session_heartbeat").size(), beats);
}

TEST_F(SessionSearch, OrderlyShutdownFinishesWithSuccessAndUnwindingWithErrored) {
  std::string orderly_id;
  {
    auto service = make_fast_service();
    orderly_id = run(start_session(service->holder()));
  }
  wait_for_finishes(1);
  std::string failed_id;
  try {
    auto service = make_fast_service();
    failed_id = run(start_session(service->holder()));
    throw std::runtime_error("the program failed");
  } catch (const std::runtime_error&) {
  }
  wait_for_finishes(2);
  auto observer = make_fast_service();
  RestClient rest = observer->create_rest_client();
  EXPECT_EQ(find(rest, orderly_id).status, SessionStatus::client_finished(ClientSessionFinishReason(), std::nullopt));
  EXPECT_EQ(find(rest, failed_id).status,
            SessionStatus::client_finished(ClientSessionFinishReason(Finish::errored), std::nullopt));
  EXPECT_EQ(requests_to(server->audit(), "/api/v1/finish_session").size(), 2u);
}

TEST_F(SessionSearch, ACancelledSessionShowsItsDetail) {
  auto service = make_fast_service();
  const std::string id = run(start_session(service->holder()));
  server->cancel_session(id, "cancelled from the console");
  RestClient rest = service->create_rest_client();
  EXPECT_EQ(find(rest, id).status, SessionStatus::cancelled("cancelled from the console"));
  SessionSearchRequest cancelled;
  cancelled.statuses = std::vector<SessionStatusQuery>{SessionStatusQuery(SessionStatusQuery::Kind::cancelled)};
  EXPECT_EQ(search(rest, cancelled).sessions.size(), 1u);
}

TEST_F(SessionSearch, PagingWalksEveryPageNewestFirst) {
  std::vector<std::unique_ptr<ServiceClient>> services;
  std::vector<std::string> opened;
  for (int i = 0; i < 5; ++i) {
    services.push_back(make_fast_service());
    opened.push_back(run(start_session(services.back()->holder())));
  }
  std::reverse(opened.begin(), opened.end());
  RestClient rest = services.front()->create_rest_client();
  SessionSearchRequest request;
  request.limit = 2;
  const SessionSearchResponse first = search(rest, request);
  ASSERT_EQ(first.sessions.size(), 2u);
  ASSERT_TRUE(first.next_cursor.has_value());
  EXPECT_EQ(first.next_cursor->last_session_id, first.sessions[1].session_id);

  const std::size_t before = requests_to(server->audit(), "/api/v1/sessions/search").size();
  auto all = rest.async_search_all_sessions(request, RestClient::default_search_max_pages, asio::use_future);
  std::vector<std::string> found;
  for (const SessionSummary& summary : run_until_ready(io, all)) found.push_back(summary.session_id);
  EXPECT_EQ(found, opened);
  EXPECT_EQ(requests_to(server->audit(), "/api/v1/sessions/search").size() - before, 3u);  // 2 + 2 + 1

  diagnostics diag;
  auto capped = rest.async_search_all_sessions(request, 2, diag, asio::use_future);
  EXPECT_EQ(failure_of(io, capped), errc::protocol_error);
  EXPECT_NE(diag.message.find("after 2 requests"), std::string::npos) << diag.message;
}

class SessionSearchCreateViaLoad : public SessionSearch {
 protected:
  local::ServerOptions server_options() const override {
    auto options = fast_server_options();
    options.client_config.create_model_via_load_weights = true;
    return options;
  }
};

TEST_F(SessionSearchCreateViaLoad, ASessionFailedByACorruptedRunShowsTheRun) {
  auto maker = make_fast_service();
  const RunWithCheckpoints made = run(make_run(*maker, {"to-corrupt"}));
  // Damage the checkpoint's state on disk: loading it fails its checksum, which fails the run that
  // is being created from it (GET training_runs shows it corrupted) and so the session.
  std::size_t damaged = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(server->data_dir())) {
    const std::string path = entry.path().string();
    if (entry.path().filename() != "state.bin" || path.find("to-corrupt") == std::string::npos) continue;
    std::fstream file(entry.path(), std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(entry.file_size() / 2));
    file.put('\x5a');
    file.seekp(static_cast<std::streamoff>(entry.file_size() / 2 + 1));
    file.put('\xa5');
    ++damaged;
  }
  ASSERT_EQ(damaged, 1u);

  auto service = make_fast_service();
  const std::string id = run(start_session(service->holder()));
  diagnostics diag;
  auto loading =
      service->async_create_training_client_from_state(made.training_paths.at(0), false, {}, diag, asio::use_future);
  EXPECT_TRUE(failure_of(io, loading));
  RestClient rest = service->create_rest_client();
  const SessionSummary summary = find(rest, id);
  ASSERT_TRUE(summary.status.has_value());
  ASSERT_EQ(summary.status->kind, SessionStatus::Kind::failed) << describe(*summary.status);
  EXPECT_EQ(summary.status->failed_reason.kind, SessionFailedReason::Kind::training_run);
  EXPECT_EQ(summary.status->failed_reason.training_run_id, id + ":train:0");
  EXPECT_EQ(summary.status->category.kind, SessionFailureCategory::Kind::user);
  auto listed = rest.async_get_training_run(id + ":train:0", AccessScope::owned, asio::use_future);
  EXPECT_TRUE(run_until_ready(io, listed).corrupted);
  SessionSearchRequest failed_only;
  failed_only.statuses = std::vector<SessionStatusQuery>{SessionStatusQuery(SessionStatusQuery::Kind::failed)};
  EXPECT_EQ(search(rest, failed_only).sessions.size(), 1u);
}

class SyncSessionSearch : public SyncService {};

TEST_F(SyncSessionSearch, BlockingCallsFinishAndFindTheSession) {
  ServiceClientOptions options = service_options();
  options.display_name = "blocking session";
  sync::ServiceClient service(options);
  sync::RestClient rest = service.create_rest_client();
  (void)service.create_sampling_client(SamplingSource::from_base_model(std::string(tiny_model)));
  const std::string id = service.session_id();

  SessionSearchRequest request;
  request.display_name = "BLOCKING";
  const SessionSearchResponse found = rest.search_sessions(request);
  ASSERT_EQ(found.sessions.size(), 1u);
  EXPECT_EQ(found.sessions[0].session_id, id);
  EXPECT_EQ(found.sessions[0].status, SessionStatus::active());

  service.finish_session(ClientSessionFinishReason(Finish::interrupted), "SIGTERM");
  const sync::Result<void> again = service.try_finish_session(ClientSessionFinishReason());
  ASSERT_TRUE(again.has_error());
  EXPECT_EQ(again.error().code, errc::invalid_argument);

  const std::vector<SessionSummary> all = rest.search_all_sessions(request);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].status, SessionStatus::client_finished(ClientSessionFinishReason(Finish::interrupted), "SIGTERM"));

  SessionSearchRequest bad;
  bad.limit = 500;
  const auto refused = rest.try_search_sessions(bad);
  ASSERT_TRUE(refused.has_error());
  EXPECT_NE(refused.error().diag.message.find("limit must be 1..200, got 500"), std::string::npos);
}

TEST_F(SyncSessionSearch, DestroyingTheLastBlockingObjectFinishesTheSession) {
  std::string id;
  {
    sync::ServiceClient service(service_options());
    (void)service.create_sampling_client(SamplingSource::from_base_model(std::string(tiny_model)));
    id = service.session_id();
  }
  sync::ServiceClient observer(service_options());
  SessionSearchRequest request;
  request.session_id = id;
  const SessionSearchResponse found = observer.create_rest_client().search_sessions(request);
  ASSERT_EQ(found.sessions.size(), 1u);
  EXPECT_EQ(found.sessions[0].status, SessionStatus::client_finished(ClientSessionFinishReason(), std::nullopt));
}

}  // namespace
}  // namespace tinker::test
