// Sequence ids, provenance checks and the batched long-poll of sampling completions
// (doc/local.md#sampling-results-in-batches, doc/protocol.md#batched-sampling-results).
//
// Choices: each sampled sequence gets "<session id>:seq:<n>", n counting from 0 per session, and
// the session remembers its prompt and sampled lengths (8 bytes a sequence) for provenance checks.
// Each sampling session logs its requests' completions with a cursor counting from 1; a
// retrieve_futures poll answers the events of its clone (seq_id / 1e9) after prev_cursor at once,
// or waits for one up to `timeout` seconds (default and cap 30 s), then 20 ms more to gather the completions
// right behind the first into the same answer. Events at or before prev_cursor
// are dropped, and so are events whose results were evicted (they could not be fetched anyway),
// so a client that never polls (the 0.25 SDK) costs no more than the results themselves.
#include "programs/local/engine/engine_impl.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <tuple>

namespace tinker::local {

using engine_detail::CompletionLog;

namespace {

constexpr std::int64_t seq_ids_per_clone = 1'000'000'000;
constexpr double max_long_poll_seconds = 30.0;
// How long a woken long poll waits for more completions before it answers.
constexpr std::chrono::milliseconds gather_window{20};

std::int32_t length_field(std::int64_t value) {
  return static_cast<std::int32_t>(std::clamp<std::int64_t>(value, 0, INT32_MAX));
}

// The events of `clone` after `prev_cursor` (dropping those at or before it and those whose
// results were evicted), and the cursor to send next.
FuturesRetrieveResponse completions_after(CompletionLog& log, std::int64_t clone, std::int64_t prev_cursor,
                                          std::chrono::system_clock::time_point evicted_before) {
  FuturesRetrieveResponse answer;
  answer.cursor = prev_cursor;
  auto found = log.by_clone.find(clone);
  if (found == log.by_clone.end()) return answer;
  std::deque<CompletionLog::Event>& events = found->second;
  while (!events.empty() && (events.front().cursor <= prev_cursor || events.front().done_at < evicted_before)) {
    events.pop_front();
  }
  answer.completions.reserve(events.size());
  for (const CompletionLog::Event& event : events) {
    answer.completions.emplace_back(event.failed ? "failed" : "finished", event.request_id);
    answer.cursor = event.cursor;
  }
  return answer;
}

}  // namespace

void Engine::Impl::assign_sequence_ids(SessionRecord& session, std::int64_t prompt_length, SampleResponse& response) {
  for (SampledSequence& sequence : response.sequences) {
    sequence.sequence_id = session.id + ":seq:" + std::to_string(session.sequences.size());
    const auto sampled = static_cast<std::int64_t>(sequence.tokens.size());
    session.sequences.push_back(engine_detail::SequenceLengths{length_field(prompt_length), length_field(sampled)});
  }
}

void Engine::Impl::record_completion(CompletionLog& log, const engine_detail::FutureRecord& future,
                                     std::int64_t seq_id) {
  CompletionLog::Event event;
  event.cursor = ++log.last_cursor;
  event.request_id = future.request_id;
  event.failed = future.state == engine_detail::FutureRecord::State::failed;
  event.done_at = future.done_at;
  std::deque<CompletionLog::Event>& events = log.by_clone[seq_id / seq_ids_per_clone];
  const auto evicted_before = clock.now() - options.result_retention;
  while (!events.empty() && events.front().done_at < evicted_before) events.pop_front();
  events.push_back(std::move(event));
  for (auto* waiter : log.waiters) waiter->cancel();
}

boost::asio::awaitable<FuturesRetrieveResponse> Engine::retrieve_futures(FuturesRetrieveRequest request,
                                                                         Principal who) {
  auto it = impl_->samplers.find(request.target.sampling_session_id);
  if (it == impl_->samplers.end() || it->second->session == nullptr || it->second->owner != who.user_id) {
    throw HttpError(404, "unknown sampling_session_id " + request.target.sampling_session_id);
  }
  if (request.prev_cursor < 0) throw HttpError(400, "prev_cursor: must not be negative");
  if (request.target.cloned_sampler_id < 0) throw HttpError(400, "target.cloned_sampler_id: must not be negative");
  const double timeout = std::min(request.timeout.value_or(max_long_poll_seconds), max_long_poll_seconds);
  if (!(timeout >= 0.0)) throw HttpError(400, "timeout: must not be negative");
  impl_->live_session(it->second->session->id, who);
  // After the wait only `log` and these copies are used: the engine may be gone by then.
  std::shared_ptr<CompletionLog> log = it->second->completions;
  const auto evicted_before = impl_->clock.now() - impl_->options.result_retention;
  FuturesRetrieveResponse answer =
      completions_after(*log, request.target.cloned_sampler_id, request.prev_cursor, evicted_before);
  if (!answer.completions.empty() || impl_->shutting_down || timeout == 0.0) co_return answer;

  auto executor = co_await boost::asio::this_coro::executor;
  boost::asio::steady_timer timer(executor);
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(timeout));
  timer.expires_at(deadline);
  log->waiters.push_back(&timer);
  auto [woken] = co_await timer.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
  std::erase(log->waiters, &timer);
  if (woken == boost::asio::error::operation_aborted && std::chrono::steady_clock::now() < deadline) {
    // Woken by a completion (or shutdown): gather the ones finishing right behind it into the same answer,
    // so a sampler with thousands in flight gets batches rather than one poll per completion.
    timer.expires_after(
        std::min<std::chrono::steady_clock::duration>(gather_window, deadline - std::chrono::steady_clock::now()));
    co_await timer.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
  }
  // Nothing is evicted by age here (that needs the engine's clock): the next poll does it.
  co_return completions_after(*log, request.target.cloned_sampler_id, request.prev_cursor, {});
}

// What "stability information" means is not documented: tinker-local records, per request, how many
// sampled logprobs there were, how many were not finite, and their minimum and mean (the numbers an RL
// loop compares against the trainer's), in the purpose of an audit entry the caller can list.
void Engine::Impl::record_stability_info(const std::string& owner, const std::string& sampler_id,
                                         const std::string& request_id, const SampleResponse& response) {
  std::int64_t count = 0;
  std::int64_t non_finite = 0;
  double sum = 0.0;
  double minimum = 0.0;
  for (const SampledSequence& sequence : response.sequences) {
    if (!sequence.logprobs) continue;
    for (const float logprob : *sequence.logprobs) {
      if (!std::isfinite(logprob)) {
        ++non_finite;
        continue;
      }
      minimum = count == 0 ? logprob : std::min(minimum, static_cast<double>(logprob));
      sum += logprob;
      ++count;
    }
  }
  const double mean = count > 0 ? sum / static_cast<double>(count) : 0.0;
  AuditLogEntry entry(now_ts(), "sample.stability_info");
  entry.purpose = "request " + request_id + " of " + sampler_id + ": logprobs=" + std::to_string(count) +
                  " non_finite=" + std::to_string(non_finite) + " min=" + std::to_string(minimum) +
                  " mean=" + std::to_string(mean);
  audit_entries.emplace_back(owner, std::move(entry));
}

namespace {

// The sequence number of `sequence_id` when it was sampled in `session`.
std::optional<std::size_t> session_sequence(const engine_detail::SessionRecord& session, std::string_view sequence_id) {
  const std::string prefix = session.id + ":seq:";
  if (!sequence_id.starts_with(prefix)) return std::nullopt;
  const std::string_view digits = sequence_id.substr(prefix.size());
  std::size_t number = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
  if (ec != std::errc() || end != digits.data() + digits.size() || digits.empty()) return std::nullopt;
  if (number >= session.sequences.size()) return std::nullopt;
  return number;
}

void check_spans_of(const engine_detail::SessionRecord& session, const std::vector<ProvenanceSpan>& spans,
                    const std::string& path) {
  for (std::size_t j = 0; j < spans.size(); ++j) {
    const bool sampled = std::holds_alternative<SampledProvenanceSpan>(spans[j]);
    const auto& [sequence_id, offset, length] =
        std::visit([](const auto& span) { return std::tie(span.sequence_id, span.offset, span.length); }, spans[j]);
    const std::string where = path + "[" + std::to_string(j) + "]";
    const std::optional<std::size_t> number = session_sequence(session, sequence_id);
    if (!number) {
      throw HttpError(400, where + ".sequence_id: " + sequence_id + " is not a sequence sampled in this session");
    }
    const engine_detail::SequenceLengths lengths = session.sequences[*number];
    const std::int64_t available = sampled ? lengths.sampled : lengths.prompt;
    if (offset + length > available) {
      throw HttpError(400, where + ": positions " + std::to_string(offset) + ".." + std::to_string(offset + length) +
                               " are past the " + (sampled ? "sampled tokens" : "prompt") + " of " + sequence_id +
                               " (" + std::to_string(available) + " positions)");
    }
  }
}

}  // namespace

void Engine::Impl::check_provenance(const SessionRecord& session, const ForwardBackwardInput& input) const {
  for (std::size_t i = 0; i < input.data.size(); ++i) {
    const Datum& datum = input.data[i];
    if (!datum.model_input_spans && !datum.loss_fn_input_spans) continue;
    try {
      validate_provenance(datum, i);  // coverage, order, lengths: the client's own checks
    } catch (const tinker::error& e) {
      throw HttpError(400, engine_detail::exception_message(e));
    }
    const std::string path = "data[" + std::to_string(i) + "]";
    if (datum.model_input_spans) check_spans_of(session, *datum.model_input_spans, path + ".model_input_spans");
    if (datum.loss_fn_input_spans) check_spans_of(session, *datum.loss_fn_input_spans, path + ".loss_fn_input_spans");
  }
}

}  // namespace tinker::local
