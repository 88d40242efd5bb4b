// Finishing the session (explicitly and at shutdown) and the session search's paging, against a
// scripted server that shows exactly what the client sends: bodies, counts, and what a hostile
// server's endless or repeated cursor does (doc/service.md#finishing-a-session,
// doc/rest.md#search-sessions).
#include "client/session/holder.hpp"
#include "support/test_server.hpp"

#include <tinker/codec.hpp>
#include <tinker/service_client.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <stdexcept>
#include <string>

namespace tinker::test {
namespace {

namespace asio = boost::asio;
using Finish = ClientSessionFinishReason::Kind;

constexpr const char* new_protocol_config = R"({"sample_use_retrieve_futures":true})";

// A service with one session ("session-1"); client/config names the post-0.25 flag or not.
class ScriptedService {
 public:
  explicit ScriptedService(bool names_new_flags) {
    server.set_handler([names_new_flags, this](const RecordedRequest& request) {
      if (request.target == "/api/v1/client/config") {
        return ScriptedResponse(200, names_new_flags ? new_protocol_config : "{}");
      }
      if (request.target == "/api/v1/create_session") {
        return ScriptedResponse(200, R"({"type":"create_session","session_id":"session-1"})");
      }
      if (request.target == "/api/v1/sessions/search") return search_answer(request);
      if (request.target == "/api/v1/client/dynamic_config") return ScriptedResponse(404, "{}");
      return ScriptedResponse(200, "{}");
    });
  }

  ServiceClientOptions options() const {
    ClientOptions client(server.base_url(), Secret(std::string("tml-unit-test-key")));
    client.log_level = LogLevel::off;
    client.telemetry_enabled = false;
    return ServiceClientOptions(client);
  }

  std::vector<RecordedRequest> requests_to(std::string_view target) const {
    std::vector<RecordedRequest> found;
    for (const RecordedRequest& request : server.requests()) {
      if (request.target == target) found.push_back(request);
    }
    return found;
  }

  /// How /api/v1/sessions/search answers: a page of one session and a cursor.
  enum class Cursor { endless, repeated, ends_after_two };
  std::atomic<Cursor> cursor{Cursor::ends_after_two};

 private:
  std::atomic<int> pages_{0};

 public:
  ScriptedServer server;  // last: destroyed first, so its thread stops before the state it reads

 private:
  ScriptedResponse search_answer(const RecordedRequest&) {
    const int page = ++pages_;
    SessionSearchResponse response;
    SessionSummary summary;
    summary.session_id = "s" + std::to_string(page);
    summary.created_at = parse_timestamp("2026-11-01T00:00:00Z") - std::chrono::seconds(page);
    summary.owner = "tml:user:1";
    summary.project_id = "p";
    response.sessions.push_back(summary);
    if (cursor == Cursor::repeated) {
      response.next_cursor = SessionSearchCursor(parse_timestamp("2026-01-01T00:00:00Z"), "s0");
    } else if (cursor == Cursor::endless || page < 2) {
      response.next_cursor = SessionSearchCursor(summary.created_at, summary.session_id);
    }
    return ScriptedResponse(200, to_json(response));
  }
};

template <class T>
T run_until_ready(asio::io_context& io, std::future<T>& future) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (future.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
    if (std::chrono::steady_clock::now() > deadline) throw std::runtime_error("test timed out");
    io.run_one_for(std::chrono::milliseconds(20));
  }
  return future.get();
}

asio::awaitable<void> ensure_session(std::shared_ptr<detail::ClientHolder> holder) {
  diagnostics diag;
  if (const boost::system::error_code ec = co_await holder->ensure_session(diag)) throw error(ec, diag);
}

// Makes the session exist (client/config, create_session).
void open_session(asio::io_context& io, const ServiceClient& service) {
  auto opening = asio::co_spawn(io, ensure_session(service.holder()), asio::use_future);
  run_until_ready(io, opening);
  ASSERT_EQ(service.session_id(), "session-1");
}

// Runs the io_context until the destroyed client's shutdown has sent what it sends and closed
// everything (the io_context then runs out of work), or 5 s passed.
void drain(asio::io_context& io) {
  if (io.stopped()) io.restart();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!io.stopped() && std::chrono::steady_clock::now() < deadline) io.run_one_for(std::chrono::milliseconds(20));
}

TEST(FinishSession, OrderlyShutdownFinishesTheSessionOnceWithSuccess) {
  ScriptedService scripted(true);
  asio::io_context io;
  {
    ServiceClient service(io.get_executor(), scripted.options());
    open_session(io, service);
  }
  drain(io);
  const auto finishes = scripted.requests_to("/api/v1/finish_session");
  ASSERT_EQ(finishes.size(), 1u);
  EXPECT_EQ(finishes[0].method, "POST");
  EXPECT_EQ(finishes[0].body, R"({"session_id":"session-1","reason":{"type":"success"}})");
}

TEST(FinishSession, DestroyedByAnExceptionItFinishesAsErrored) {
  ScriptedService scripted(true);
  asio::io_context io;
  try {
    ServiceClient service(io.get_executor(), scripted.options());
    open_session(io, service);
    throw std::runtime_error("the training script failed");
  } catch (const std::runtime_error&) {
  }
  drain(io);
  const auto finishes = scripted.requests_to("/api/v1/finish_session");
  ASSERT_EQ(finishes.size(), 1u);
  EXPECT_EQ(finishes[0].body, R"({"session_id":"session-1","reason":{"type":"errored"}})");
}

TEST(FinishSession, AnExplicitFinishWinsAndIsNeverRepeated) {
  ScriptedService scripted(true);
  asio::io_context io;
  {
    ServiceClient service(io.get_executor(), scripted.options());
    open_session(io, service);
    auto finishing =
        service.async_finish_session(ClientSessionFinishReason(Finish::interrupted), "SIGINT", asio::use_future);
    run_until_ready(io, finishing);

    diagnostics diag;
    auto again = service.async_finish_session(ClientSessionFinishReason(), std::nullopt, diag, asio::use_future);
    EXPECT_THROW(run_until_ready(io, again), boost::system::system_error);
    EXPECT_NE(diag.message.find("was finished (interrupted)"), std::string::npos) << diag.message;

    // Calls that need the session now fail before sending anything.
    auto creating = service.async_create_sampling_client(SamplingSource::from_base_model("m"), diag, asio::use_future);
    EXPECT_THROW(run_until_ready(io, creating), boost::system::system_error);
    EXPECT_NE(diag.message.find("create a new ServiceClient"), std::string::npos) << diag.message;
  }
  drain(io);
  const auto finishes = scripted.requests_to("/api/v1/finish_session");
  ASSERT_EQ(finishes.size(), 1u);  // not again at shutdown
  EXPECT_EQ(finishes[0].body, R"({"session_id":"session-1","reason":{"type":"interrupted"},"detail":"SIGINT"})");
}

TEST(FinishSession, AServerOfThe025ProtocolIsNotSentAFinishAtShutdown) {
  ScriptedService scripted(false);
  asio::io_context io;
  {
    ServiceClient service(io.get_executor(), scripted.options());
    open_session(io, service);
  }
  drain(io);
  EXPECT_TRUE(scripted.requests_to("/api/v1/finish_session").empty());
}

TEST(FinishSession, WithoutASessionNothingIsSent) {
  ScriptedService scripted(true);
  asio::io_context io;
  {
    ServiceClient service(io.get_executor(), scripted.options());
    diagnostics diag;
    auto finishing = service.async_finish_session(ClientSessionFinishReason(), std::nullopt, diag, asio::use_future);
    EXPECT_THROW(run_until_ready(io, finishing), boost::system::system_error);
    EXPECT_NE(diag.message.find("no session yet"), std::string::npos) << diag.message;
  }
  drain(io);
  EXPECT_TRUE(scripted.requests_to("/api/v1/finish_session").empty());
}

class SearchPaging : public ::testing::Test {
 protected:
  std::vector<SessionSummary> search_all(SessionSearchRequest request, std::int64_t max_pages, diagnostics& diag) {
    RestClient rest = service.create_rest_client();
    auto all = rest.async_search_all_sessions(std::move(request), max_pages, diag, asio::use_future);
    return run_until_ready(io, all);
  }
  ScriptedService scripted{true};
  asio::io_context io;
  ServiceClient service{io.get_executor(), scripted.options()};
};

TEST_F(SearchPaging, EachPageSendsThePreviousCursor) {
  diagnostics diag;
  const auto all = search_all(SessionSearchRequest(), 10, diag);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[1].session_id, "s2");
  const auto searches = scripted.requests_to("/api/v1/sessions/search");
  ASSERT_EQ(searches.size(), 2u);
  EXPECT_EQ(searches[0].body, R"({"user_metadata":{},"owner":{"type":"own"},"limit":20})");
  EXPECT_EQ(searches[1].body, R"({"user_metadata":{},"owner":{"type":"own"},"limit":20,)"
                              R"("cursor":{"last_created_at":"2026-10-31T23:59:59Z","last_session_id":"s1"}})");
}

TEST_F(SearchPaging, ANeverEndingCursorIsStoppedByThePageLimit) {
  scripted.cursor = ScriptedService::Cursor::endless;
  diagnostics diag;
  EXPECT_THROW(search_all(SessionSearchRequest(), 5, diag), boost::system::system_error);
  EXPECT_NE(diag.message.find("still had more pages after 5 requests"), std::string::npos) << diag.message;
  EXPECT_EQ(scripted.requests_to("/api/v1/sessions/search").size(), 5u);
}

TEST_F(SearchPaging, ARepeatedCursorIsAnError) {
  scripted.cursor = ScriptedService::Cursor::repeated;
  diagnostics diag;
  EXPECT_THROW(search_all(SessionSearchRequest(), 50, diag), boost::system::system_error);
  EXPECT_NE(diag.message.find("repeated the cursor"), std::string::npos) << diag.message;
  EXPECT_EQ(scripted.requests_to("/api/v1/sessions/search").size(), 2u);
}

TEST_F(SearchPaging, BadRequestsFailNamingTheFieldBeforeAnythingIsSent) {
  RestClient rest = service.create_rest_client();
  auto failure = [&](SessionSearchRequest request) {
    diagnostics diag;
    auto page = rest.async_search_sessions(std::move(request), diag, asio::use_future);
    try {
      run_until_ready(io, page);
    } catch (const boost::system::system_error& e) {
      EXPECT_EQ(e.code(), make_error_code(errc::invalid_argument));
      return diag.message;
    }
    return std::string("no error");
  };
  SessionSearchRequest request;
  request.limit = 0;
  EXPECT_NE(failure(request).find("limit must be 1..200, got 0"), std::string::npos);
  request.limit = 201;
  EXPECT_NE(failure(request).find("limit must be 1..200, got 201"), std::string::npos);
  request.limit = 200;
  request.owner = SearchOwner::users({});
  EXPECT_NE(failure(request).find("owner.owner_urns must hold 1..10 URNs, got 0"), std::string::npos);
  request.owner = SearchOwner::users(std::vector<std::string>(11, "u"));
  EXPECT_NE(failure(request).find("got 11"), std::string::npos);
  diagnostics diag;
  EXPECT_THROW(search_all(SessionSearchRequest(), 0, diag), boost::system::system_error);
  EXPECT_NE(diag.message.find("max_pages must be at least 1"), std::string::npos);
  EXPECT_TRUE(scripted.requests_to("/api/v1/sessions/search").empty());
}

}  // namespace
}  // namespace tinker::test
