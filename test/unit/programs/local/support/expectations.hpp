// Small checks shared by the HTTP API tests.
#pragma once

#include "support/raw_http_client.hpp"
#include "unit/programs/local/support/wire_bodies.hpp"

#include <gtest/gtest.h>

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <string>
#include <string_view>

namespace tinker::local::test {

// The raw client shared with the transport tests (test/support/raw_http_client.hpp).
using tinker::test::HeaderList;
using tinker::test::RawExchange;
using tinker::test::RawHttpClient;
using tinker::test::RawResponse;
using tinker::test::RawResult;

/// A JSON answer: Content-Type says JSON and Content-Length matches the body (a missing
/// Content-Length on a 400 reads as a proxy fault to clients).
inline ::testing::AssertionResult is_json_answer(const RawResponse& response) {
  const auto type = response.header("Content-Type");
  if (!type || type->find("application/json") == std::string::npos) {
    return ::testing::AssertionFailure() << "Content-Type is not application/json\n" << response.describe();
  }
  const auto length = response.header("Content-Length");
  if (!length || *length != std::to_string(response.body.size())) {
    return ::testing::AssertionFailure() << "Content-Length missing or wrong\n" << response.describe();
  }
  try {
    (void)response.json();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << e.what();
  }
  return ::testing::AssertionSuccess();
}

/// An error answer (doc/protocol.md#errors): `status`, JSON {"detail": "..."} whose text contains
/// `mentions`.
inline ::testing::AssertionResult is_error(const RawResponse& response, int status, std::string_view mentions = {}) {
  if (response.status != status) {
    return ::testing::AssertionFailure() << "expected HTTP " << status << "\n" << response.describe();
  }
  if (auto json = is_json_answer(response); !json) return json;
  const boost::json::value body = response.json();
  const boost::json::value* detail = body.is_object() ? body.get_object().if_contains("detail") : nullptr;
  if (detail == nullptr || !detail->is_string()) {
    return ::testing::AssertionFailure() << "no string \"detail\" in the error body\n" << response.describe();
  }
  if (!mentions.empty() && std::string_view(detail->get_string()).find(mentions) == std::string_view::npos) {
    return ::testing::AssertionFailure() << "detail does not mention \"" << mentions << "\"\n" << response.describe();
  }
  return ::testing::AssertionSuccess();
}

/// The "detail" of an error body ({"detail": "..."}); throws when the body has none.
inline std::string detail_of(const RawResponse& response) {
  return std::string(response.json().as_object().at("detail").as_string());
}

/// Any 4xx with a JSON {"detail"} mentioning `mentions` (the protocol leaves 400 vs 422 open).
inline ::testing::AssertionResult is_client_error(const RawResponse& response, std::string_view mentions = {}) {
  if (response.status < 400 || response.status > 499) {
    return ::testing::AssertionFailure() << "expected a 4xx\n" << response.describe();
  }
  return is_error(response, response.status, mentions);
}

/// Every metric key is "<name>:<reduction>" (the suffix says how chunk results combine,
/// doc/training.md#chunking) and every value a number.
inline ::testing::AssertionResult metrics_well_formed(const boost::json::value& metrics) {
  if (!metrics.is_object()) return ::testing::AssertionFailure() << "metrics is not an object";
  for (const auto& entry : metrics.get_object()) {
    const std::string_view key = entry.key();
    const auto colon = key.find(':');
    if (colon == std::string_view::npos || colon == 0 || colon + 1 == key.size() ||
        key.find(':', colon + 1) != std::string_view::npos) {
      return ::testing::AssertionFailure() << "metric key \"" << key << "\" is not name:reduction";
    }
    if (!entry.value().is_number()) return ::testing::AssertionFailure() << "metric " << key << " is not a number";
  }
  return ::testing::AssertionSuccess();
}

}  // namespace tinker::local::test
