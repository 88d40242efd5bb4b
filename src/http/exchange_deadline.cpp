#include "http/exchange_deadline.hpp"

#include <boost/asio/error.hpp>

namespace tinker::http {

ExchangeDeadline::ExchangeDeadline(const boost::asio::any_io_executor& executor)
    : state_(std::make_shared<State>(executor)) {}

ExchangeDeadline::~ExchangeDeadline() {
  state_->socket = nullptr;
  state_->timer.cancel();
}

void ExchangeDeadline::start(boost::asio::ip::tcp::socket& socket, std::chrono::milliseconds timeout) {
  const clock::time_point now = clock::now();
  // Saturates: a timeout of years must not wrap around into the past.
  const auto room = std::chrono::duration_cast<std::chrono::milliseconds>(clock::time_point::max() - now);
  state_->deadline = timeout < room ? now + timeout : clock::time_point::max();
  state_->socket = &socket;
  state_->expired = false;
  // An armed timer waking before the deadline re-arms itself then; one waking after it (an
  // earlier exchange had a longer timeout) must be moved.
  if (!state_->armed || state_->deadline < state_->wakes_at) arm(state_);
}

void ExchangeDeadline::arm(const std::shared_ptr<State>& state) {
  state->timer.expires_at(state->deadline);  // cancels the wait it replaces
  state->wakes_at = state->deadline;
  state->armed = true;
  state->timer.async_wait([state](const boost::system::error_code& ec) {
    // Cancelled: replaced by a new wait, or the connection is gone. Either way nothing to do.
    if (ec != boost::asio::error::operation_aborted) on_wake(state);
  });
}

void ExchangeDeadline::on_wake(const std::shared_ptr<State>& state) {
  state->armed = false;
  if (state->socket == nullptr) return;  // between exchanges: the next one arms it again
  if (clock::now() < state->deadline) return arm(state);
  state->expired = true;
  boost::system::error_code ignored;
  state->socket->cancel(ignored);
}

}  // namespace tinker::http
