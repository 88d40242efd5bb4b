// The one list of endpoint paths (wire/endpoint_paths.hpp): what the SDK sends and what the
// tinker-local router matches are the same spelling.
#include "core/wire/endpoint_paths.hpp"

#include <gtest/gtest.h>

namespace tinker::wire::paths {
namespace {

TEST(EndpointPaths, TheRouterMatchesWhatFollowsThePrefix) {
  EXPECT_EQ(retrieve_future.full(), "/api/v1/retrieve_future");
  EXPECT_EQ(retrieve_future.relative(), "retrieve_future");
  EXPECT_EQ(auth_token.relative(), "auth/token");
  EXPECT_EQ(billing_usage.relative(), "billing/usage/events");
  EXPECT_EQ(std::string(api_prefix) + std::string(asample.relative()), asample.full());
}

}  // namespace
}  // namespace tinker::wire::paths
