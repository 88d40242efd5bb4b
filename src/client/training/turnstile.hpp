// The TrainingClient's submission turnstile (doc/training.md#ordering-and-pipelining, doc/local.md;
// doc/architecture.md#threading-and-ordering).
//
// Every model-scoped operation of one TrainingClient (forward, forward_backward and its chunks,
// optim_step, save/load_state, save_weights_for_sampler) carries a `seq_id`, and the server
// executes a model's operations strictly in seq_id order, holding a later seq_id until every
// earlier one has arrived. The turnstile makes the client's submits reach the server in that
// order, one operation at a time, while results are awaited concurrently outside the turn:
//
//   auto ticket = turnstile.take_ticket();              // at initiation: initiation order = order
//   diagnostics diag;
//   if (auto ec = co_await turnstile.wait_turn(ticket, diag)) { ... fail the op with ec/diag ... }
//   std::int64_t first = turnstile.next_seq_ids(ticket, n);   // n consecutive ids: first..first+n-1
//   ... encode and POST the request(s) ...
//   turnstile.finish_turn(ticket, TurnOutcome::submitted());   // the next op may submit now
//   ... await the result future, concurrently with later ops ...
//
// Outcomes of a turn (exactly one `finish_turn` per turn obtained from `wait_turn`):
//  * submitted: every seq_id handed out in the turn was accepted (a ticket came back). They stay
//    used; the next op continues after them.
//  * not_sent: none of the turn's seq_ids can have reached the server (the op failed validation
//    or encoding, or was cancelled before its first byte was written). Its seq_ids are returned,
//    so the next op reuses them and the server sees no gap. Also used for a turn that took none.
//  * lost(seq_id, reason): the submit of `seq_id` failed for good after its retries and the
//    server may or may not have it. If it does not, it will hold every later seq_id forever
//    (doc/local.md), and re-sending later ops with other ids cannot fill the gap. The turnstile
//    becomes poisoned: every op still waiting, and every later `wait_turn`, fails at once with
//    errc::request_failed (category unknown) and a message naming the missing seq_id and telling
//    the user to continue from a checkpoint (save_state / load_state) with a new TrainingClient.
//    For a chunked forward_backward, name the lowest seq_id of the turn without a ticket.
//
// Cancellation: if the coroutine awaiting `wait_turn` is cancelled (cancellation slot, e.g. a
// parallel_group with a deadline timer), the ticket passes its turn: it uses no seq_id and the
// next ticket gets the seq_id this one would have had. A cancellation requested before the
// turn is granted always wins, even if the turn arrived in the same instant, so a caller that
// gets an error never holds the turn. An op that gives up without ever calling `wait_turn`
// (or after it succeeded but before taking seq_ids) calls `pass_turn`.
//
// Threading: `take_ticket` may be called from any thread (the blocking facade takes the ticket
// on the caller's thread, so call order is submission order); everything else runs on the
// client's single io thread, so there are no locks. Waiters sleep on a steady_timer that never
// expires and are woken by cancelling it: no polling. The turnstile must outlive every
// coroutine waiting on it (the TrainingClient's shared state owns it).
#pragma once

#include <tinker/error.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

namespace tinker::client::training {

/// How a turn ended; see the file comment for the exact semantics.
class TurnOutcome {
 public:
  enum class Kind { submitted, not_sent, lost };

  static TurnOutcome submitted() { return TurnOutcome(Kind::submitted, 0, {}); }
  static TurnOutcome not_sent() { return TurnOutcome(Kind::not_sent, 0, {}); }
  /// `missing_seq_id` must have been handed out in this turn; `reason` is the final submit error.
  static TurnOutcome lost(std::int64_t missing_seq_id, std::string reason) {
    return TurnOutcome(Kind::lost, missing_seq_id, std::move(reason));
  }

  Kind kind() const noexcept { return kind_; }
  std::int64_t missing_seq_id() const noexcept { return missing_seq_id_; }
  const std::string& reason() const noexcept { return reason_; }

 private:
  TurnOutcome(Kind kind, std::int64_t missing_seq_id, std::string reason)
      : kind_(kind), missing_seq_id_(missing_seq_id), reason_(std::move(reason)) {}

  Kind kind_;
  std::int64_t missing_seq_id_;
  std::string reason_;
};

class Turnstile {
 public:
  using Ticket = std::uint64_t;

  /// `first_seq_id` is the seq_id of the first operation: 1, because the model's creation
  /// (create_model or create-via-load) was seq 0.
  explicit Turnstile(std::int64_t first_seq_id = 1);
  Turnstile(const Turnstile&) = delete;
  Turnstile& operator=(const Turnstile&) = delete;

  /// A place in line. Thread-safe; call it when the operation is initiated.
  Ticket take_ticket() noexcept { return next_ticket_.fetch_add(1, std::memory_order_relaxed); }
  /// `count` consecutive places (forward_backward_custom takes two: its forward and its
  /// backward). Returns the first.
  Ticket take_tickets(std::uint64_t count) noexcept { return next_ticket_.fetch_add(count, std::memory_order_relaxed); }

  /// Completes when `ticket` holds the turn (all earlier tickets finished or passed): success,
  /// and the caller must end the turn with `finish_turn` or `pass_turn`. Otherwise the ticket
  /// has passed its turn and the result is errc::cancelled (the awaiting coroutine was
  /// cancelled) or errc::request_failed (poisoned by a lost seq_id; details in `diag`).
  boost::asio::awaitable<boost::system::error_code> wait_turn(Ticket ticket, diagnostics& diag);

  /// Hands out `count` (>= 1) consecutive seq_ids to the turn holder; returns the first.
  /// May be called several times in one turn. Throws std::logic_error if `ticket` does not hold
  /// the turn or `count` < 1.
  std::int64_t next_seq_ids(Ticket ticket, std::int64_t count);

  /// Ends the turn of the holder `ticket` (see the file comment). Throws std::logic_error if
  /// `ticket` does not hold the turn, or a lost seq_id was not handed out in this turn.
  void finish_turn(Ticket ticket, const TurnOutcome& outcome);

  /// Gives up `ticket`'s place without submitting anything: if it holds the turn this is
  /// finish_turn(not_sent); if its turn has not come yet it will be skipped. Idempotent for a
  /// ticket that is still waiting or already passed; a no-op after `finish_turn`.
  void pass_turn(Ticket ticket);

  /// True once a turn ended with `lost`.
  bool poisoned() const noexcept { return poison_.has_value(); }
  /// The seq_id the next submitting operation will get.
  std::int64_t peek_next_seq_id() const noexcept { return next_seq_id_; }
  /// The ticket whose turn it is (it may not be waiting yet).
  Ticket current_ticket() const noexcept { return current_; }
  /// Number of coroutines suspended in wait_turn.
  std::size_t waiting_count() const noexcept { return waiters_.size(); }

 private:
  class Poison {
   public:
    Poison(std::int64_t seq_id_, std::string message_) : seq_id(seq_id_), message(std::move(message_)) {}
    std::int64_t seq_id;
    std::string message;
  };

  void require_holder(Ticket ticket, const char* what) const;
  void advance();
  void wake(Ticket ticket);
  void wake_all();
  boost::system::error_code poison_error(diagnostics& diag) const;

  std::atomic<Ticket> next_ticket_{0};
  Ticket current_ = 0;                                    ///< the ticket whose turn it is
  std::set<Ticket> passed_early_;                         ///< tickets that gave up before their turn came
  std::map<Ticket, boost::asio::steady_timer*> waiters_;  ///< suspended in wait_turn, by ticket
  std::int64_t next_seq_id_;                              ///< the next seq_id to hand out
  std::int64_t turn_first_seq_id_;                        ///< next_seq_id_ when the current turn began
  std::optional<Poison> poison_;
};

}  // namespace tinker::client::training
