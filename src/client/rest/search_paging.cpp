#include "client/rest/search_paging.hpp"

#include <tinker/error.hpp>

namespace tinker::client::rest {

namespace {
constexpr std::int64_t largest_search_page = 200;
constexpr std::size_t most_owner_urns = 10;
}  // namespace

void check_search_limit_and_owner(std::string_view call, std::int64_t limit, const SearchOwner& owner) {
  const std::string prefix(call);
  if (limit < 1 || limit > largest_search_page) {
    throw error(errc::invalid_argument, prefix + ": limit must be 1..200, got " + std::to_string(limit));
  }
  const std::size_t urns = owner.owner_urns.size();
  if (owner.kind == SearchOwner::Kind::user && (urns == 0 || urns > most_owner_urns)) {
    throw error(errc::invalid_argument,
                prefix + ": owner.owner_urns must hold 1..10 URNs, got " + std::to_string(urns));
  }
  if (owner.kind != SearchOwner::Kind::user && urns != 0) {
    throw error(errc::invalid_argument, prefix + ": owner.owner_urns is only for a user owner (SearchOwner::users)");
  }
}

PageWalk::PageWalk(std::string_view call, std::int64_t max_pages) : call_(call), max_pages_(max_pages) {
  if (max_pages < 1) {
    throw error(errc::invalid_argument, call_ + ": max_pages must be at least 1, got " + std::to_string(max_pages));
  }
}

std::optional<std::string> PageWalk::next(const std::string& cursor_key, std::string_view cursor_text) {
  ++pages_read_;
  if (!cursors_seen_.insert(cursor_key).second) {
    return call_ + ": page " + std::to_string(pages_read_) + " repeated the cursor already given (" +
           std::string(cursor_text) + "); stopped, the search would never end";
  }
  if (pages_read_ >= max_pages_) {
    return call_ + ": the server still had more pages after " + std::to_string(pages_read_) +
           " requests, the limit max_pages (" + std::to_string(max_pages_) + "); raise max_pages or narrow the search";
  }
  return std::nullopt;
}

}  // namespace tinker::client::rest
