// Drives a FutureCore from the server: spawns the retrieve_future poll (spec 6.2) of one or
// several tickets on the client's io thread, decodes the final answer(s) and settles the core.
//
// Each poll is a background task of the holder (ServiceClient shutdown cancels it) and can be
// stopped through Future::cancel(). Queue-state changes reach the future's callback; the
// paused-queue warning (at most once a minute per future, spec 6.4) goes to the holder's log.
#pragma once

#include "client/future_core.hpp"
#include "client/future_poll.hpp"
#include "client/holder.hpp"

#include <functional>
#include <memory>
#include <vector>

namespace tinker::detail {

/// Turns the final answer of a poll into the future's value.
using ResultDecoder =
    std::function<boost::system::error_code(const http::Response& answer, ErasedResult& value, diagnostics& diag)>;
/// Turns the final answers of several polls (in request order) into the future's value.
using ResultCombiner = std::function<boost::system::error_code(std::vector<http::Response>& answers,
                                                               ErasedResult& value, diagnostics& diag)>;

/// Fills in the parts of a PollRequest that come from the holder and the future: the
/// queue-state observer, the warning sink, the billing pause.
void attach(client::PollRequest& request, ClientHolder& holder, const std::shared_ptr<FutureCore>& core);

/// Polls one ticket and settles `core` with `decode`'s value or the poll's error.
void spawn_poll(std::shared_ptr<ClientHolder> holder, std::shared_ptr<FutureCore> core, client::PollRequest request,
                ResultDecoder decode);

/// Polls all tickets concurrently (spec 6.5) and settles `core` with `combine`'s value or the
/// first error.
void spawn_poll_all(std::shared_ptr<ClientHolder> holder, std::shared_ptr<FutureCore> core,
                    std::vector<client::PollRequest> requests, ResultCombiner combine);

/// Runs `work` as a background task of the holder whose cancellation (Future::cancel,
/// ServiceClient shutdown) reaches it through its cancellation slot. `work` must settle `core`.
void spawn_task(std::shared_ptr<ClientHolder> holder, std::shared_ptr<FutureCore> core,
                boost::asio::awaitable<void> work);

}  // namespace tinker::detail
