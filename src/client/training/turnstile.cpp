#include "client/training/turnstile.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <stdexcept>

namespace tinker::client::training {

namespace asio = boost::asio;

namespace {

// Registers a suspended waiter's timer for the duration of one wait, and removes it however the
// wait ends (wakeup, cancellation, exception, or the coroutine frame being destroyed).
class WaiterRegistration {
 public:
  WaiterRegistration(std::map<Turnstile::Ticket, asio::steady_timer*>& waiters, Turnstile::Ticket ticket,
                     asio::steady_timer& timer)
      : waiters_(waiters), ticket_(ticket) {
    if (!waiters_.emplace(ticket, &timer).second) {
      throw std::logic_error("Turnstile::wait_turn: ticket " + std::to_string(ticket) + " is already waiting");
    }
  }
  WaiterRegistration(const WaiterRegistration&) = delete;
  WaiterRegistration& operator=(const WaiterRegistration&) = delete;
  ~WaiterRegistration() { waiters_.erase(ticket_); }

 private:
  std::map<Turnstile::Ticket, asio::steady_timer*>& waiters_;
  Turnstile::Ticket ticket_;
};

}  // namespace

Turnstile::Turnstile(std::int64_t first_seq_id) : next_seq_id_(first_seq_id), turn_first_seq_id_(first_seq_id) {
  if (first_seq_id < 1) throw std::logic_error("Turnstile: the first seq_id must be >= 1 (creation is seq 0)");
}

asio::awaitable<boost::system::error_code> Turnstile::wait_turn(Ticket ticket, diagnostics& diag) {
  const auto executor = co_await asio::this_coro::executor;
  // Never expires: a waiter is woken only by cancelling it (our wakeup) or by the coroutine's
  // own cancellation, which Asio forwards to this async_wait through the cancellation slot.
  asio::steady_timer wakeup(executor, asio::steady_timer::time_point::max());
  for (;;) {
    if (poison_) {
      pass_turn(ticket);
      co_return poison_error(diag);
    }
    const asio::cancellation_state cancellation = co_await asio::this_coro::cancellation_state;
    // Checked before "is it my turn": a caller whose deadline fired must not be told it holds
    // the turn, or nobody would ever end it.
    if (cancellation.cancelled() != asio::cancellation_type::none || ticket < current_ ||
        passed_early_.contains(ticket)) {
      pass_turn(ticket);
      diag.message = "the operation was cancelled while waiting for its turn to submit; it used no seq_id";
      co_return make_error_code(errc::cancelled);
    }
    if (ticket == current_) co_return boost::system::error_code{};
    try {
      WaiterRegistration registration(waiters_, ticket, wakeup);
      co_await wakeup.async_wait(asio::as_tuple(asio::use_awaitable));
    } catch (...) {
      // Only reachable if Asio throws for a cancellation (throw_if_cancelled): never leave a
      // ticket behind that later tickets would wait on forever.
      pass_turn(ticket);
      throw;
    }
  }
}

std::int64_t Turnstile::next_seq_ids(Ticket ticket, std::int64_t count) {
  require_holder(ticket, "next_seq_ids");
  if (count < 1) throw std::logic_error("Turnstile::next_seq_ids: count must be >= 1");
  const std::int64_t first = next_seq_id_;
  next_seq_id_ += count;
  return first;
}

void Turnstile::finish_turn(Ticket ticket, const TurnOutcome& outcome) {
  require_holder(ticket, "finish_turn");
  switch (outcome.kind()) {
    case TurnOutcome::Kind::submitted: break;
    case TurnOutcome::Kind::not_sent:
      next_seq_id_ = turn_first_seq_id_;  // the next op reuses them: the server saw no gap
      break;
    case TurnOutcome::Kind::lost: {
      const std::int64_t missing = outcome.missing_seq_id();
      if (missing < turn_first_seq_id_ || missing >= next_seq_id_) {
        throw std::logic_error("Turnstile::finish_turn: lost seq_id " + std::to_string(missing) +
                               " was not handed out in this turn");
      }
      poison_.emplace(
          missing, "seq_id " + std::to_string(missing) + " was lost: its submit failed for good (" + outcome.reason() +
                       ") and the server may never have received it. The server runs a model's operations "
                       "strictly in seq_id order and holds every later one until seq_id " +
                       std::to_string(missing) +
                       " arrives, so this TrainingClient cannot run further operations. Continue from your last "
                       "checkpoint: save_state / load_state into a new TrainingClient.");
      break;
    }
  }
  advance();
  if (poison_) wake_all();
}

void Turnstile::pass_turn(Ticket ticket) {
  if (ticket < current_) return;  // already finished or passed
  if (ticket == current_) {
    next_seq_id_ = turn_first_seq_id_;
    advance();
    return;
  }
  passed_early_.insert(ticket);
}

void Turnstile::require_holder(Ticket ticket, const char* what) const {
  if (ticket != current_ || poison_) {
    throw std::logic_error(std::string("Turnstile::") + what + ": ticket " + std::to_string(ticket) +
                           " does not hold the turn");
  }
}

void Turnstile::advance() {
  ++current_;
  while (passed_early_.erase(current_) != 0) ++current_;
  turn_first_seq_id_ = next_seq_id_;
  wake(current_);
}

void Turnstile::wake(Ticket ticket) {
  if (const auto it = waiters_.find(ticket); it != waiters_.end()) it->second->cancel();
}

void Turnstile::wake_all() {
  for (const auto& [ticket, timer] : waiters_) timer->cancel();
}

boost::system::error_code Turnstile::poison_error(diagnostics& diag) const {
  diag.message = poison_->message;
  diag.category = RequestErrorCategory::unknown;
  return make_error_code(errc::request_failed);
}

}  // namespace tinker::client::training
