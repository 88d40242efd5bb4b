// RestClient's checkpoint search against a scripted server: the exact body sent, the cursor sent
// back unchanged, and hostile servers (a cursor that never ends, a cursor handed back twice).
#include "support/future_wait.hpp"
#include "support/test_server.hpp"

#include <tinker/rest_client.hpp>
#include <tinker/service_client.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>

namespace tinker {
namespace {

namespace asio = boost::asio;
using test::RecordedRequest;
using test::ScriptedResponse;
using test::ScriptedServer;

constexpr const char* search_target = "/api/v1/checkpoints/search";

std::string page_json(int page, bool more) {
  const std::string stamp = "2026-11-28T10:00:" + std::string(page < 10 ? "0" : "") + std::to_string(page) + "Z";
  std::string json = R"({"checkpoints":[{"checkpoint_id":"weights/c)" + std::to_string(page) +
                     R"(","checkpoint_type":"training","time":")" + stamp +
                     R"(","tinker_path":"tinker://r:train:0/weights/c)" + std::to_string(page) + R"("}])";
  if (more) {
    json += R"(,"next_cursor":{"last_created_at":")" + stamp + R"(","last_checkpoint_uuid":"u)" + std::to_string(page) +
            R"("}})";
  } else {
    json += "}";
  }
  return json;
}

class CheckpointSearchClient : public ::testing::Test {
 protected:
  // Answers client/config with defaults and search pages from `pages(n)` (n counts from 1).
  void serve(std::function<std::string(int)> pages) {
    server_.set_handler([this, pages = std::move(pages)](const RecordedRequest& request) {
      if (request.target.find(search_target) == 0) return ScriptedResponse(200, pages(++search_calls_));
      return ScriptedResponse(200, "{}");
    });
    ClientOptions options(server_.base_url(), Secret("tml-search-test-key"));
    options.telemetry_enabled = false;
    service_ = std::make_unique<ServiceClient>(io_.get_executor(), ServiceClientOptions(std::move(options)));
  }

  template <class T>
  T wait(std::future<T>& future) {
    return test::run_until_ready(io_, future);
  }

  // The failure code of `future` (success when it has a value).
  template <class T>
  boost::system::error_code failure_of(std::future<T>& future) {
    return test::failure_when_ready(io_, future);
  }

  std::vector<std::string> search_bodies() const {
    std::vector<std::string> bodies;
    for (const RecordedRequest& request : server_.requests()) {
      if (request.target.find(search_target) == 0) {
        EXPECT_EQ(request.method, "POST");
        bodies.push_back(request.body);
      }
    }
    return bodies;
  }

  asio::io_context io_;
  ScriptedServer server_;
  std::atomic<int> search_calls_{0};
  std::unique_ptr<ServiceClient> service_;
};

TEST_F(CheckpointSearchClient, AllPagesAreWalkedAndTheCursorGoesBackUnchanged) {
  serve([](int page) { return page_json(page, page < 3); });
  CheckpointSearchRequest request;
  request.checkpoint_type = CheckpointType::training;
  request.limit = 1;
  auto all = service_->create_rest_client().async_search_all_checkpoints(request, RestClient::default_search_max_pages,
                                                                         asio::use_future);
  const std::vector<Checkpoint> checkpoints = wait(all);
  ASSERT_EQ(checkpoints.size(), 3u);
  EXPECT_EQ(checkpoints[2].checkpoint_id, "weights/c3");
  const std::vector<std::string> bodies = search_bodies();
  ASSERT_EQ(bodies.size(), 3u);
  EXPECT_EQ(bodies[0], R"({"user_metadata":{},"checkpoint_type":"training","owner":{"type":"own"},"limit":1})");
  EXPECT_EQ(bodies[1], R"({"user_metadata":{},"checkpoint_type":"training","owner":{"type":"own"},"limit":1,)"
                       R"("cursor":{"last_created_at":"2026-11-28T10:00:01Z","last_checkpoint_uuid":"u1"}})");
  EXPECT_NE(bodies[2].find(R"("last_checkpoint_uuid":"u2")"), std::string::npos);
}

TEST_F(CheckpointSearchClient, ACursorThatNeverEndsIsStoppedByThePageLimit) {
  serve([](int page) { return page_json(page, true); });
  diagnostics diag;
  auto all =
      service_->create_rest_client().async_search_all_checkpoints(CheckpointSearchRequest(), 5, diag, asio::use_future);
  EXPECT_EQ(failure_of(all), errc::protocol_error);
  EXPECT_NE(diag.message.find("max_pages (5)"), std::string::npos) << diag.message;
  EXPECT_EQ(search_bodies().size(), 5u);
}

TEST_F(CheckpointSearchClient, ACursorHandedBackTwiceFailsAtOnce) {
  serve([](int page) { return page_json(page > 2 ? 2 : page, true); });
  diagnostics diag;
  auto all = service_->create_rest_client().async_search_all_checkpoints(
      CheckpointSearchRequest(), RestClient::default_search_max_pages, diag, asio::use_future);
  EXPECT_EQ(failure_of(all), errc::protocol_error);
  EXPECT_NE(diag.message.find("already given"), std::string::npos) << diag.message;
  EXPECT_EQ(search_bodies().size(), 3u);
}

TEST_F(CheckpointSearchClient, BadInputIsRefusedBeforeAnythingIsSent) {
  serve([](int page) { return page_json(page, false); });
  RestClient rest = service_->create_rest_client();
  auto expect_refused = [&](CheckpointSearchRequest request, const std::string& needle) {
    diagnostics diag;
    auto one = rest.async_search_checkpoints(request, diag, asio::use_future);
    EXPECT_EQ(failure_of(one), errc::invalid_argument) << needle;
    EXPECT_NE(diag.message.find(needle), std::string::npos) << diag.message;
  };
  CheckpointSearchRequest request;
  request.limit = 0;
  expect_refused(request, "search_checkpoints: limit must be 1..200, got 0");
  request.limit = 201;
  expect_refused(request, "limit must be 1..200, got 201");
  request.limit = 10;
  request.owner = SearchOwner::users({});
  expect_refused(request, "owner.owner_urns must hold 1..10 URNs, got 0");
  auto pages = rest.async_search_all_checkpoints(CheckpointSearchRequest(), 0, asio::use_future);
  EXPECT_EQ(failure_of(pages), errc::invalid_argument);
  EXPECT_TRUE(search_bodies().empty());
}

}  // namespace
}  // namespace tinker
