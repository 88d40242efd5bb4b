// Futures (doc/protocol.md#futures, doc/local.md#ordering-and-futures): tickets, completion,
// scripted pauses, retention and poll answers.
#include "programs/local/engine/engine_impl.hpp"

namespace tinker::local {

using engine_detail::FuturePtr;
using engine_detail::FutureRecord;

namespace engine_detail {
namespace {

template <class... F>
struct overloaded : F... {
  using F::operator()...;
};
template <class... F>
overloaded(F...) -> overloaded<F...>;

QueueState queue_state_of(std::string_view name) {
  if (name == "paused_capacity") return QueueState::paused_capacity;
  if (name == "paused_rate_limit") return QueueState::paused_rate_limit;
  return QueueState::active;
}

bool has_protobuf_form(const FutureRecord& future) {
  return std::holds_alternative<ForwardBackwardOutput>(future.typed) ||
         std::holds_alternative<SampleResponse>(future.typed);
}

/// Encodes lazily and caches; an unencodable result (NaN in a tensor) becomes a server failure.
const std::string& json_of(FutureRecord& future) {
  if (!future.json.empty()) return future.json;
  try {
    std::visit(overloaded{[](std::monostate) {}, [&](const auto& value) { future.json = to_json(value); }},
               future.typed);
  } catch (const std::exception& e) {
    future.state = FutureRecord::State::failed;
    future.typed = std::monostate{};
    future.json = to_json(
        RequestFailedResponse("the result cannot be encoded: " + exception_message(e), RequestErrorCategory::server));
  }
  return future.json;
}

const std::string& proto_of(FutureRecord& future) {
  if (!future.proto.empty()) return future.proto;
  std::visit(overloaded{[](std::monostate) {}, [&](const auto& value) { future.proto = to_protobuf(value); }},
             future.typed);
  return future.proto;
}

}  // namespace

RetrieveOutcome poll_answer(FutureRecord& future, bool allow_metadata_only, bool accept_protobuf,
                            const PollSettings& settings) {
  switch (future.state) {
    case FutureRecord::State::evicted: throw HttpError(410, "the result of " + future.request_id + " has expired");
    case FutureRecord::State::pending: {
      QueueState state = QueueState::active;
      if (future.paused_state && std::chrono::steady_clock::now() < future.paused_until) state = *future.paused_state;
      RetrieveOutcome not_ready{"application/json", to_json(TryAgainResponse(future.request_id, state))};
      if (settings.try_again_as_408) not_ready.status = 408;  // try_again's alternate, 408 form
      return not_ready;
    }
    case FutureRecord::State::failed: return RetrieveOutcome{"application/json", future.json};
    case FutureRecord::State::complete: break;
  }
  bool as_protobuf = accept_protobuf && has_protobuf_form(future);
  if (as_protobuf) {
    try {
      const std::string& body = proto_of(future);
      if (allow_metadata_only && body.size() > settings.inline_payload_limit) {
        return RetrieveOutcome{"application/json",
                               to_json(FutureMetadataResponse(static_cast<std::int64_t>(body.size())))};
      }
      return RetrieveOutcome{"application/x-protobuf", body};
    } catch (const std::exception& e) {
      return RetrieveOutcome{"application/json",
                             to_json(RequestFailedResponse("the result cannot be encoded: " + exception_message(e),
                                                           RequestErrorCategory::server))};
    }
  }
  const std::string& body = json_of(future);
  if (future.state == FutureRecord::State::complete && allow_metadata_only &&
      body.size() > settings.inline_payload_limit) {
    return RetrieveOutcome{"application/json", to_json(FutureMetadataResponse(static_cast<std::int64_t>(body.size())))};
  }
  return RetrieveOutcome{"application/json", body};
}

}  // namespace engine_detail

FuturePtr Engine::Impl::new_future(const char* endpoint, const std::string& owner, SessionRecord* session) {
  auto future = std::make_shared<FutureRecord>();
  future->request_id = "req-" + ids.next();
  future->endpoint = endpoint;
  future->owner = owner;
  future->session = session;
  if (pause_hook) {
    if (std::optional<QueuePause> pause = pause_hook(endpoint)) {
      future->paused_state = engine_detail::queue_state_of(pause->queue_state);
      future->paused_until = std::chrono::steady_clock::now() + pause->duration;
    }
  }
  futures.emplace(future->request_id, future);
  if (session != nullptr) session->incomplete.insert(future);
  return future;
}

void Engine::Impl::complete(const FuturePtr& future, OpResult result) {
  if (future->done()) return;  // already failed (session expired, model unloaded)
  std::visit(engine_detail::overloaded{[&](Failure& failure) {
                                         future->state = FutureRecord::State::failed;
                                         future->json = to_json(
                                             RequestFailedResponse(std::move(failure.message), failure.category));
                                       },
                                       [&](JsonResult& json) {
                                         future->state = FutureRecord::State::complete;
                                         future->json = std::move(json.text);
                                       },
                                       [&](auto& typed) {
                                         future->state = FutureRecord::State::complete;
                                         future->typed = std::move(typed);
                                       }},
             result);
  future->done_at = clock.now();
  if (future->session != nullptr) future->session->incomplete.erase(future);
  for (auto* waiter : future->waiters) waiter->cancel();
  completed_order.push_back(future);
}

void Engine::Impl::after_pause(const FuturePtr& future, std::function<void()> start) {
  if (!future->paused_state) {
    start();
    return;
  }
  at_time(future->paused_until, std::move(start));
}

void Engine::Impl::at_time(std::chrono::steady_clock::time_point ready_at, std::function<void()> then) {
  if (ready_at <= std::chrono::steady_clock::now() || shutting_down) {
    then();
    return;
  }
  auto timer = std::make_shared<boost::asio::steady_timer>(io, ready_at);
  pause_timers.insert(timer.get());
  std::weak_ptr<int> token = alive;
  timer->async_wait([this, timer, token, then = std::move(then)](boost::system::error_code) {
    if (token.expired()) return;
    pause_timers.erase(timer.get());
    if (shutting_down) return;
    then();
  });
}

FuturePtr Engine::Impl::future_for_poll(const std::string& request_id, const Principal& who) {
  evict_old_results();  // amortised O(1): it only looks at the oldest results
  auto it = futures.find(request_id);
  if (it == futures.end() || it->second->owner != who.user_id) {
    throw HttpError(404, "unknown request_id " + request_id);
  }
  FuturePtr future = it->second;
  if (!future->done() && future->session != nullptr) check_expiry(*future->session);
  if (future->state == FutureRecord::State::evicted) {
    throw HttpError(410, "the result of " + request_id + " has expired");
  }
  return future;
}

engine_detail::PollSettings Engine::Impl::poll_settings() const {
  engine_detail::PollSettings settings;
  settings.hold = options.long_poll_hold;
  settings.try_again_as_408 = options.try_again_as_408;
  settings.inline_payload_limit = options.inline_payload_limit;
  settings.shutting_down = shutting_down;
  return settings;
}

void Engine::Impl::evict_old_results() {
  auto now = clock.now();
  // Completion times follow the engine clock, which only moves forward, so the deque is sorted.
  while (!completed_order.empty() && completed_order.front()->done_at + options.result_retention <= now) {
    FutureRecord& future = *completed_order.front();
    // The record stays (small) so that later polls get 410 rather than 404.
    future.state = FutureRecord::State::evicted;
    future.typed = std::monostate{};
    std::string().swap(future.json);
    std::string().swap(future.proto);
    evicted_order.emplace_back(now, future.request_id);
    completed_order.pop_front();
  }
  while (!evicted_order.empty() && evicted_order.front().first + options.result_retention <= now) {
    futures.erase(evicted_order.front().second);
    evicted_order.pop_front();
  }
}

}  // namespace tinker::local
