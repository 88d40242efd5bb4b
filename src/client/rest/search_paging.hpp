// What the cursor-paged searches (search_checkpoints, search_sessions) share: the checks of the
// page size and the owner before anything is sent, and the guard of a walk over every page.
#pragma once

#include <tinker/types/search.hpp>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace tinker::client::rest {

/// Throws tinker::error (invalid_argument) naming `call` and the field when `limit` is outside
/// 1..200 or `owner` holds a wrong number of URNs: requests the service would refuse.
void check_search_limit_and_owner(std::string_view call, std::int64_t limit, const SearchOwner& owner);

/// Guards a walk over every page of a search. A server whose cursor never ends is stopped after
/// `max_pages` requests, and one that hands back a cursor it already gave is stopped at once:
/// either would make the walk loop forever.
class PageWalk {
 public:
  /// Throws tinker::error (invalid_argument) naming `call` when `max_pages` < 1.
  PageWalk(std::string_view call, std::int64_t max_pages);

  /// After a page answered a next cursor (`cursor_key` identifies it, `cursor_text` describes it
  /// for people): empty when the walk goes on, else why it stops (a protocol error).
  std::optional<std::string> next(const std::string& cursor_key, std::string_view cursor_text);

 private:
  std::string call_;
  std::int64_t max_pages_;
  std::int64_t pages_read_ = 0;
  std::set<std::string> cursors_seen_;
};

}  // namespace tinker::client::rest
