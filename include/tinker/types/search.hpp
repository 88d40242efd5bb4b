/// \file
/// What the search calls share: whose items a search covers (`doc/rest.md#search-checkpoints`,
/// `doc/rest.md#search-sessions`).
#pragma once

#include <tinker/types/common.hpp>

#include <string>
#include <vector>

namespace tinker {

/// Whose sessions or checkpoints a search covers: a union on `type` on the wire
/// (`{"type": "own"}`, `{"type": "accessible"}`, `{"type": "user", "owner_urns": [...]}`).
class SearchOwner {
 public:
  /// The three owners the service knows.
  enum class Kind {
    own,         ///< the caller's own items (the service's default)
    accessible,  ///< every owner's items the caller may list
    user,        ///< the items of the users named in `owner_urns` (1 to 10 of them)
  };

  /// The caller's own items.
  SearchOwner() = default;
  /// The caller's own items.
  static SearchOwner own() { return SearchOwner(); }
  /// Every owner's items the caller may list.
  static SearchOwner accessible() { return SearchOwner(Kind::accessible, {}); }
  /// The items of the users `owner_urns_` (1 to 10 URNs).
  static SearchOwner users(std::vector<std::string> owner_urns_) {
    return SearchOwner(Kind::user, std::move(owner_urns_));
  }

  Kind kind = Kind::own;                ///< which of the three
  std::vector<std::string> owner_urns;  ///< for Kind::user only

  /// Equal when every field is equal.
  friend bool operator==(const SearchOwner&, const SearchOwner&) = default;

 private:
  SearchOwner(Kind kind_, std::vector<std::string> owner_urns_) : kind(kind_), owner_urns(std::move(owner_urns_)) {}
};

TINKER_DECLARE_PRINTABLE(SearchOwner);

}  // namespace tinker
