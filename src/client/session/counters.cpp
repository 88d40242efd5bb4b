// ServiceClient::counters(): the request tallies of the holder's two HTTP clients (every request, and client/config
// and auth/token on their own transport), summed (doc/bench.md#request-counters).
#include "client/session/holder_impl.hpp"

#include <tinker/service_client.hpp>

namespace tinker {

namespace {

void add_tally(RequestCounters& counters, const http::RequestTally& tally) {
  counters.requests += tally.requests();
  counters.retries += tally.retries();
  counters.rate_limited += tally.rate_limited();
  counters.server_errors += tally.server_errors();
  counters.transport_errors += tally.transport_errors();
}

}  // namespace

// Any thread: the holder's HTTP clients live as long as the holder, and their tallies are atomics.
RequestCounters ServiceClient::counters() const {
  RequestCounters counters;
  if (!holder_) return counters;
  const detail::ClientHolder::Impl& impl = holder_->impl();
  add_tally(counters, impl.http->tally());
  add_tally(counters, impl.auth_http->tally());
  return counters;
}

}  // namespace tinker
