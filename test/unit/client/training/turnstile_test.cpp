// The TrainingClient's submission turnstile: order, concurrency after submit, cancellation,
// returned seq_ids and poisoning (doc/training.md#ordering-and-pipelining, doc/local.md).
#include "client/training/turnstile.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <array>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace tinker::client::training {
namespace {

namespace asio = boost::asio;
using Ticket = Turnstile::Ticket;
using ::testing::HasSubstr;

// What one simulated operation saw.
class OpRecord {
 public:
  bool done = false;
  boost::system::error_code code;
  diagnostics diag;
  std::int64_t first_seq_id = -1;
};

// Shared observations of a test.
class Journal {
 public:
  std::vector<std::string> events;
  int submitting = 0;  // ops between wait_turn and finish_turn
  int max_submitting = 0;
};

asio::awaitable<void> yield_times(int times) {
  for (int i = 0; i < times; ++i) co_await asio::post(co_await asio::this_coro::executor, asio::use_awaitable);
}

// A submitting operation: waits for its turn, takes `count` seq_ids, "sends" for `send_yields`
// scheduler rounds, ends its turn with `outcome`.
asio::awaitable<void> run_op(Turnstile* turnstile, Ticket ticket, int start_yields, int send_yields, std::int64_t count,
                             TurnOutcome::Kind outcome, OpRecord* record, Journal* journal) {
  co_await yield_times(start_yields);
  record->code = co_await turnstile->wait_turn(ticket, record->diag);
  if (!record->code) {
    journal->max_submitting = std::max(journal->max_submitting, ++journal->submitting);
    record->first_seq_id = turnstile->next_seq_ids(ticket, count);
    co_await yield_times(send_yields);
    journal->events.push_back("submitted " + std::to_string(ticket));
    --journal->submitting;
    if (outcome == TurnOutcome::Kind::submitted) turnstile->finish_turn(ticket, TurnOutcome::submitted());
    if (outcome == TurnOutcome::Kind::not_sent) turnstile->finish_turn(ticket, TurnOutcome::not_sent());
    if (outcome == TurnOutcome::Kind::lost) {
      turnstile->finish_turn(ticket, TurnOutcome::lost(record->first_seq_id, "connection reset"));
    }
  }
  record->done = true;
}

// Only waits for the turn (with whatever cancellation slot the spawner binds) and records it.
asio::awaitable<void> wait_only(Turnstile* turnstile, Ticket ticket, OpRecord* record) {
  record->code = co_await turnstile->wait_turn(ticket, record->diag);
  record->done = true;
}

// Holds the turn until `release` is cancelled (the test's "the server answered" signal).
asio::awaitable<void> hold_turn_until(Turnstile* turnstile, Ticket ticket, asio::steady_timer* release,
                                      OpRecord* record, Journal* journal) {
  record->code = co_await turnstile->wait_turn(ticket, record->diag);
  if (record->code) co_return;
  record->first_seq_id = turnstile->next_seq_ids(ticket, 1);
  co_await release->async_wait(asio::as_tuple(asio::use_awaitable));
  journal->events.push_back("submitted " + std::to_string(ticket));
  turnstile->finish_turn(ticket, TurnOutcome::submitted());
  record->done = true;
}

// Submits, ends its turn, then awaits its "result" until `result_ready` is cancelled.
asio::awaitable<void> submit_then_await_result(Turnstile* turnstile, Ticket ticket, asio::steady_timer* result_ready,
                                               OpRecord* record, Journal* journal) {
  record->code = co_await turnstile->wait_turn(ticket, record->diag);
  if (record->code) co_return;
  record->first_seq_id = turnstile->next_seq_ids(ticket, 1);
  turnstile->finish_turn(ticket, TurnOutcome::submitted());
  journal->events.push_back("submitted " + std::to_string(ticket));
  co_await result_ready->async_wait(asio::as_tuple(asio::use_awaitable));
  journal->events.push_back("result " + std::to_string(ticket));
  record->done = true;
}

// wait_turn raced against a deadline timer in a parallel_group, as a client deadline would be.
asio::awaitable<void> wait_with_deadline(Turnstile* turnstile, Ticket ticket, std::chrono::milliseconds deadline,
                                         OpRecord* record) {
  const auto executor = co_await asio::this_coro::executor;
  asio::steady_timer timer(executor, deadline);
  auto turn = asio::co_spawn(executor, turnstile->wait_turn(ticket, record->diag), asio::deferred);
  auto expiry = timer.async_wait(asio::deferred);
  auto [order, turn_error, turn_code, timer_code] =
      co_await asio::experimental::make_parallel_group(std::move(turn), std::move(expiry))
          .async_wait(asio::experimental::wait_for_one(), asio::use_awaitable);
  record->code = turn_code;
  record->done = turn_error == nullptr;
  (void)order;
  (void)timer_code;
}

class TurnstileTest : public ::testing::Test {
 protected:
  void run() {
    io_.run_for(std::chrono::seconds(5));
    io_.restart();
  }
  // The turnstile outlives the io_context: pending coroutine frames unregister from it when the
  // io_context destroys them.
  Turnstile turnstile_;
  Journal journal_;
  asio::io_context io_;
};

TEST_F(TurnstileTest, TicketOrderIsSeqOrderUnderInterleavedCoroutines) {
  constexpr int count = 6;
  std::array<Ticket, count> tickets{};
  for (auto& ticket : tickets) ticket = turnstile_.take_ticket();
  std::array<OpRecord, count> records;
  // Spawned in a scrambled order, the late tickets start waiting first and send slowly.
  const std::array<int, count> spawn_order = {3, 0, 5, 1, 4, 2};
  for (const int i : spawn_order) {
    asio::co_spawn(io_,
                   run_op(&turnstile_, tickets[i], (i * 7) % 4, 3 - i % 3, 1, TurnOutcome::Kind::submitted, &records[i],
                          &journal_),
                   asio::detached);
  }
  run();
  for (int i = 0; i < count; ++i) {
    ASSERT_TRUE(records[i].done) << i;
    EXPECT_FALSE(records[i].code) << i;
    EXPECT_EQ(records[i].first_seq_id, i + 1) << "ticket " << i;  // creation was seq 0
  }
  const std::vector<std::string> expected = {"submitted 0", "submitted 1", "submitted 2",
                                             "submitted 3", "submitted 4", "submitted 5"};
  EXPECT_EQ(journal_.events, expected);
  EXPECT_EQ(journal_.max_submitting, 1);  // one submit at a time
  EXPECT_EQ(turnstile_.waiting_count(), 0U);
}

TEST_F(TurnstileTest, TurnAdvancesRightAfterSubmitWhileResultsAreAwaited) {
  asio::steady_timer result_a(io_, asio::steady_timer::time_point::max());
  asio::steady_timer result_b(io_, asio::steady_timer::time_point::max());
  OpRecord a, b;
  const Ticket ta = turnstile_.take_ticket();
  const Ticket tb = turnstile_.take_ticket();
  asio::co_spawn(io_, submit_then_await_result(&turnstile_, ta, &result_a, &a, &journal_), asio::detached);
  asio::co_spawn(io_, submit_then_await_result(&turnstile_, tb, &result_b, &b, &journal_), asio::detached);
  io_.poll();
  // Both submitted while A's result is still outstanding: B did not wait for A's result.
  const std::vector<std::string> submitted = {"submitted 0", "submitted 1"};
  EXPECT_EQ(journal_.events, submitted);
  EXPECT_EQ(a.first_seq_id, 1);
  EXPECT_EQ(b.first_seq_id, 2);
  result_b.cancel();  // results may arrive in any order
  io_.poll();
  result_a.cancel();
  io_.poll();
  const std::vector<std::string> all = {"submitted 0", "submitted 1", "result 1", "result 0"};
  EXPECT_EQ(journal_.events, all);
  EXPECT_TRUE(a.done && b.done);
}

TEST_F(TurnstileTest, CancelledWaiterPassesItsTurnAndItsSeqIdGoesToTheNext) {
  asio::steady_timer release(io_, asio::steady_timer::time_point::max());
  asio::cancellation_signal cancel_b;
  OpRecord a, b, c;
  const Ticket ta = turnstile_.take_ticket();
  const Ticket tb = turnstile_.take_ticket();
  const Ticket tc = turnstile_.take_ticket();
  asio::co_spawn(io_, hold_turn_until(&turnstile_, ta, &release, &a, &journal_), asio::detached);
  asio::co_spawn(io_, wait_only(&turnstile_, tb, &b), asio::bind_cancellation_slot(cancel_b.slot(), asio::detached));
  asio::co_spawn(io_, run_op(&turnstile_, tc, 0, 0, 1, TurnOutcome::Kind::submitted, &c, &journal_), asio::detached);
  io_.poll();
  EXPECT_EQ(turnstile_.waiting_count(), 2U);
  cancel_b.emit(asio::cancellation_type::terminal);
  io_.poll();
  ASSERT_TRUE(b.done);  // completes at once, while A still holds the turn
  EXPECT_EQ(b.code, make_error_code(errc::cancelled));
  EXPECT_THAT(b.diag.message, HasSubstr("no seq_id"));
  EXPECT_FALSE(c.done);
  release.cancel();
  io_.poll();
  EXPECT_EQ(a.first_seq_id, 1);
  EXPECT_EQ(c.first_seq_id, 2);  // the seq_id B would have had
  EXPECT_EQ(turnstile_.peek_next_seq_id(), 3);
}

TEST_F(TurnstileTest, DeadlineInParallelGroupPassesTheTurn) {
  asio::steady_timer release(io_, asio::steady_timer::time_point::max());
  OpRecord a, b, c;
  const Ticket ta = turnstile_.take_ticket();
  const Ticket tb = turnstile_.take_ticket();
  const Ticket tc = turnstile_.take_ticket();
  asio::co_spawn(io_, hold_turn_until(&turnstile_, ta, &release, &a, &journal_), asio::detached);
  asio::co_spawn(io_, wait_with_deadline(&turnstile_, tb, std::chrono::milliseconds(5), &b), asio::detached);
  asio::co_spawn(io_, run_op(&turnstile_, tc, 0, 0, 1, TurnOutcome::Kind::submitted, &c, &journal_), asio::detached);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!b.done && std::chrono::steady_clock::now() < deadline) io_.run_one_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(b.done);
  EXPECT_EQ(b.code, make_error_code(errc::cancelled));
  release.cancel();
  run();
  EXPECT_EQ(c.first_seq_id, 2);
}

TEST_F(TurnstileTest, CancellationThatArrivesWithTheTurnStillWins) {
  asio::cancellation_signal cancel_b;
  OpRecord b, c;
  const Ticket ta = turnstile_.take_ticket();  // held by the test itself
  const Ticket tb = turnstile_.take_ticket();
  const Ticket tc = turnstile_.take_ticket();
  asio::co_spawn(io_, wait_only(&turnstile_, tb, &b), asio::bind_cancellation_slot(cancel_b.slot(), asio::detached));
  asio::co_spawn(io_, run_op(&turnstile_, tc, 0, 0, 1, TurnOutcome::Kind::submitted, &c, &journal_), asio::detached);
  io_.poll();
  EXPECT_EQ(turnstile_.next_seq_ids(ta, 1), 1);
  // A ends its turn (B's wakeup is queued) and B's deadline fires before B runs again: B must
  // not be told it holds the turn, since its caller has already given up.
  // Both happen in one io-thread handler, as when a deadline timer and the previous op's
  // submit complete in the same round.
  Turnstile* turnstile = &turnstile_;
  asio::post(io_, [turnstile, ta, &cancel_b] {
    turnstile->finish_turn(ta, TurnOutcome::submitted());
    cancel_b.emit(asio::cancellation_type::terminal);
  });
  io_.poll();
  ASSERT_TRUE(b.done);
  EXPECT_EQ(b.code, make_error_code(errc::cancelled));
  ASSERT_TRUE(c.done);
  EXPECT_EQ(c.first_seq_id, 2);
}

TEST_F(TurnstileTest, NotSentReturnsTheTurnsSeqIds) {
  OpRecord a, b, c;
  const Ticket ta = turnstile_.take_ticket();
  const Ticket tb = turnstile_.take_ticket();
  const Ticket tc = turnstile_.take_ticket();
  asio::co_spawn(io_, run_op(&turnstile_, ta, 0, 1, 1, TurnOutcome::Kind::submitted, &a, &journal_), asio::detached);
  asio::co_spawn(io_, run_op(&turnstile_, tb, 0, 1, 3, TurnOutcome::Kind::not_sent, &b, &journal_), asio::detached);
  asio::co_spawn(io_, run_op(&turnstile_, tc, 0, 1, 2, TurnOutcome::Kind::submitted, &c, &journal_), asio::detached);
  run();
  EXPECT_EQ(a.first_seq_id, 1);
  EXPECT_EQ(b.first_seq_id, 2);  // took 2..4, sent none
  EXPECT_EQ(c.first_seq_id, 2);  // reuses them: the server sees no gap
  EXPECT_EQ(turnstile_.peek_next_seq_id(), 4);
}

TEST_F(TurnstileTest, ChunkedTurnTakesConsecutiveSeqIds) {
  OpRecord a, b;
  const Ticket ta = turnstile_.take_ticket();
  const Ticket tb = turnstile_.take_ticket();
  asio::co_spawn(io_, run_op(&turnstile_, ta, 0, 0, 3, TurnOutcome::Kind::submitted, &a, &journal_), asio::detached);
  asio::co_spawn(io_, run_op(&turnstile_, tb, 0, 0, 1, TurnOutcome::Kind::submitted, &b, &journal_), asio::detached);
  run();
  EXPECT_EQ(a.first_seq_id, 1);
  EXPECT_EQ(b.first_seq_id, 4);
}

TEST_F(TurnstileTest, PassBeforeWaitingSkipsTheTicket) {
  OpRecord a, c;
  const Ticket ta = turnstile_.take_ticket();
  const Ticket tb = turnstile_.take_ticket();
  const Ticket tc = turnstile_.take_ticket();
  turnstile_.pass_turn(tb);  // e.g. its caller gave up before the op reached the io thread
  turnstile_.pass_turn(tb);  // idempotent
  asio::co_spawn(io_, run_op(&turnstile_, tc, 0, 0, 1, TurnOutcome::Kind::submitted, &c, &journal_), asio::detached);
  asio::co_spawn(io_, run_op(&turnstile_, ta, 2, 0, 1, TurnOutcome::Kind::submitted, &a, &journal_), asio::detached);
  run();
  EXPECT_EQ(a.first_seq_id, 1);
  EXPECT_EQ(c.first_seq_id, 2);
  EXPECT_EQ(turnstile_.current_ticket(), 3U);
  // Passing in the turn after taking seq_ids returns them, like not_sent.
  const Ticket td = turnstile_.take_ticket();
  EXPECT_EQ(turnstile_.next_seq_ids(td, 2), 3);
  turnstile_.pass_turn(td);
  EXPECT_EQ(turnstile_.peek_next_seq_id(), 3);
}

TEST_F(TurnstileTest, LostSeqIdPoisonsWaitingAndLaterOps) {
  OpRecord a, b, c, d;
  const Ticket ta = turnstile_.take_ticket();
  const Ticket tb = turnstile_.take_ticket();
  const Ticket tc = turnstile_.take_ticket();
  asio::co_spawn(io_, run_op(&turnstile_, ta, 0, 0, 1, TurnOutcome::Kind::submitted, &a, &journal_), asio::detached);
  asio::co_spawn(io_, run_op(&turnstile_, tb, 1, 2, 1, TurnOutcome::Kind::lost, &b, &journal_), asio::detached);
  asio::co_spawn(io_, wait_only(&turnstile_, tc, &c), asio::detached);
  // Ticket tx is taken but its op has not started waiting yet; ty waits behind it.
  const Ticket tx = turnstile_.take_ticket();
  const Ticket ty = turnstile_.take_ticket();
  OpRecord x, y;
  asio::co_spawn(io_, wait_only(&turnstile_, ty, &y), asio::detached);
  run();
  ASSERT_TRUE(y.done);  // woken although the ticket before it never waited
  EXPECT_EQ(y.code, make_error_code(errc::request_failed));
  asio::co_spawn(io_, wait_only(&turnstile_, tx, &x), asio::detached);
  run();
  EXPECT_EQ(x.code, make_error_code(errc::request_failed));
  EXPECT_EQ(b.first_seq_id, 2);
  ASSERT_TRUE(c.done);  // was waiting: failed instead of hanging
  EXPECT_TRUE(turnstile_.poisoned());
  EXPECT_EQ(c.code, make_error_code(errc::request_failed));
  EXPECT_EQ(c.diag.category, RequestErrorCategory::unknown);
  EXPECT_THAT(c.diag.message, HasSubstr("seq_id 2 was lost"));
  EXPECT_THAT(c.diag.message, HasSubstr("connection reset"));
  EXPECT_THAT(c.diag.message, HasSubstr("save_state / load_state"));
  // A later op fails on its first step, without suspending.
  const Ticket td = turnstile_.take_ticket();
  asio::co_spawn(io_, wait_only(&turnstile_, td, &d), asio::detached);
  io_.run_one();
  EXPECT_TRUE(d.done);
  EXPECT_EQ(d.code, make_error_code(errc::request_failed));
  EXPECT_THAT(d.diag.message, HasSubstr("seq_id 2"));
  EXPECT_THROW(turnstile_.next_seq_ids(td, 1), std::logic_error);
}

TEST_F(TurnstileTest, MisuseIsALogicError) {
  EXPECT_THROW(Turnstile(0), std::logic_error);
  const Ticket ta = turnstile_.take_ticket();
  const Ticket tb = turnstile_.take_ticket();
  EXPECT_THROW(turnstile_.next_seq_ids(tb, 1), std::logic_error);  // not its turn
  EXPECT_THROW(turnstile_.finish_turn(tb, TurnOutcome::submitted()), std::logic_error);
  EXPECT_THROW(turnstile_.next_seq_ids(ta, 0), std::logic_error);
  EXPECT_EQ(turnstile_.next_seq_ids(ta, 2), 1);
  // A lost seq_id must be one of the turn's own.
  EXPECT_THROW(turnstile_.finish_turn(ta, TurnOutcome::lost(3, "x")), std::logic_error);
  EXPECT_FALSE(turnstile_.poisoned());
  turnstile_.finish_turn(ta, TurnOutcome::lost(2, "x"));
  EXPECT_TRUE(turnstile_.poisoned());
}

TEST(TurnstileTickets, TakeTicketIsThreadSafe) {
  Turnstile turnstile;
  constexpr int threads = 4;
  constexpr int per_thread = 2000;
  std::array<std::vector<Ticket>, threads> taken;
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&turnstile, &taken, t] {
      for (int i = 0; i < per_thread; ++i) taken[t].push_back(turnstile.take_ticket());
    });
  }
  for (auto& worker : workers) worker.join();
  std::set<Ticket> unique;
  for (const auto& list : taken) unique.insert(list.begin(), list.end());
  EXPECT_EQ(unique.size(), static_cast<std::size_t>(threads * per_thread));
  EXPECT_EQ(*unique.rbegin(), static_cast<Ticket>(threads * per_thread - 1));
}

}  // namespace
}  // namespace tinker::client::training
