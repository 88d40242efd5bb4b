// SearchOwner's JSON form: a union on `type` (doc/rest.md#search-sessions).
#include <tinker/codec.hpp>
#include <tinker/error.hpp>
#include <tinker/types/search.hpp>

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace tinker {
namespace {

std::string encode_error(const SearchOwner& owner) {
  try {
    (void)to_json(owner);
  } catch (const error& e) {
    return e.what();
  }
  return "no error";
}

std::string decode_error(std::string_view json) {
  try {
    (void)from_json<SearchOwner>(json);
  } catch (const error& e) {
    return e.what();
  }
  return "no error";
}

TEST(SearchOwnerCodec, EachKindHasItsExactBody) {
  EXPECT_EQ(to_json(SearchOwner()), R"({"type":"own"})");
  EXPECT_EQ(to_json(SearchOwner::own()), R"({"type":"own"})");
  EXPECT_EQ(to_json(SearchOwner::accessible()), R"({"type":"accessible"})");
  EXPECT_EQ(to_json(SearchOwner::users({"urn:a", "urn:b"})), R"({"type":"user","owner_urns":["urn:a","urn:b"]})");
}

TEST(SearchOwnerCodec, DecodesEachKind) {
  EXPECT_EQ(from_json<SearchOwner>(R"({"type":"own"})"), SearchOwner::own());
  EXPECT_EQ(from_json<SearchOwner>(R"({"type":"accessible"})"), SearchOwner::accessible());
  EXPECT_EQ(from_json<SearchOwner>(R"({"owner_urns":["u1"],"type":"user"})"), SearchOwner::users({"u1"}));
}

TEST(SearchOwnerCodec, UserNeedsOneToTenUrnsBothWays) {
  EXPECT_NE(encode_error(SearchOwner::users({})).find("owner_urns must hold 1..10 URNs, got 0"), std::string::npos);
  EXPECT_NE(encode_error(SearchOwner::users(std::vector<std::string>(11, "u"))).find("got 11"), std::string::npos);
  EXPECT_EQ(encode_error(SearchOwner::users(std::vector<std::string>(10, "u"))), "no error");
  EXPECT_NE(decode_error(R"({"type":"user","owner_urns":[]})").find("owner_urns"), std::string::npos);
  EXPECT_NE(decode_error(R"({"type":"user"})").find("owner_urns: missing required field"), std::string::npos);
}

TEST(SearchOwnerCodec, UrnsWithAnotherKindAreRefusedWhenSent) {
  SearchOwner owner = SearchOwner::accessible();
  owner.owner_urns = {"u"};
  EXPECT_NE(encode_error(owner).find("only allowed with type \"user\""), std::string::npos);
}

TEST(SearchOwnerCodec, UnknownTypeIsRefusedNamingTheField) {
  // Only servers decode owners; a server cannot search for an owner it does not know.
  const std::string message = decode_error(R"({"type":"team"})");
  EXPECT_NE(message.find("type: unknown type \"team\" (expected one of: own, accessible, user)"), std::string::npos)
      << message;
  EXPECT_NE(decode_error(R"({})").find("type: missing required field"), std::string::npos);
}

TEST(SearchOwnerCodec, PrintsAsJson) {
  std::ostringstream printed;
  printed << SearchOwner::users({"u"});
  EXPECT_EQ(printed.str(), R"({"type":"user","owner_urns":["u"]})");
}

}  // namespace
}  // namespace tinker
