// The async API shape shared by every client (architecture.md "Async API shape").
//
// Every operation is `async_x(args..., token)` with the completion signature
// `void(boost::system::error_code, T)`, so one API serves `co_await` (with `tinker::use_awaitable`
// or `boost::asio::deferred`), `boost::asio::use_future`, `boost::asio::as_tuple(...)` and plain
// callbacks. Each operation also has an overload taking `tinker::diagnostics&` that receives the
// HTTP status, request id, server message and category of a failure.
//
// `tinker::use_awaitable` is the token to prefer in coroutines: a failure is thrown as
// `tinker::error` carrying those diagnostics, where Asio's own `use_awaitable` would throw a bare
// `boost::system::system_error` with only the code.
#pragma once

#include <tinker/error.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>

namespace tinker {

/// Completion token: `co_await op(..., tinker::use_awaitable)` returns the value or throws
/// `tinker::error` with the operation's diagnostics.
class use_awaitable_t {
 public:
  constexpr use_awaitable_t() = default;
};
inline constexpr use_awaitable_t use_awaitable{};

/// The default token of every `async_x` (Boost 1.81 has no default completion token of its own).
using default_token = boost::asio::deferred_t;

namespace detail {

template <class T>
using Handler = boost::asio::any_completion_handler<void(boost::system::error_code, T)>;

// Runs `initiation(handler, diagnostics*)` and turns a failure into tinker::error. A named
// coroutine taking its arguments by value (GCC 12 rule 2).
// `user_diag` (may be null) also receives the diagnostics.
template <class T, class Initiation>
boost::asio::awaitable<T> await_with_diagnostics(Initiation initiation, diagnostics* user_diag) {
  // In this frame, not on the heap: it lives exactly as long (one allocation less per call).
  diagnostics own_diag;
  diagnostics* diag_ptr = user_diag != nullptr ? user_diag : &own_diag;
  auto as_tuple_token = boost::asio::as_tuple(boost::asio::use_awaitable);
  auto [code, value] =
      co_await boost::asio::async_initiate<decltype(as_tuple_token), void(boost::system::error_code, T)>(
          [diag_ptr](auto handler, Initiation init) mutable { init(Handler<T>(std::move(handler)), diag_ptr); },
          as_tuple_token, std::move(initiation));
  if (code) throw error(code, *diag_ptr);
  co_return std::move(value);
}

/// Starts an operation for any token. `initiation(Handler<T>, diagnostics* or nullptr)` must
/// never complete inline (it posts).
template <class T, class Token, class Initiation>
auto initiate(Token&& token, diagnostics* diag, Initiation initiation) {
  if constexpr (std::is_same_v<std::decay_t<Token>, use_awaitable_t>) {
    return await_with_diagnostics<T>(std::move(initiation), diag);
  } else {
    return boost::asio::async_initiate<Token, void(boost::system::error_code, T)>(
        [diag](auto handler, Initiation init) { init(Handler<T>(std::move(handler)), diag); }, token,
        std::move(initiation));
  }
}

/// Binds the free function behind one public operation (defined in src/) to its arguments. The
/// function takes the arguments, then the diagnostics (may be null) and the handler.
template <class T, class Function, class... Args>
class BoundOperation {
 public:
  BoundOperation(Function* function, Args... args) : function_(function), args_(std::move(args)...) {}

  void operator()(Handler<T> handler, diagnostics* diag) {
    std::apply([&](Args&... args) { function_(std::move(args)..., diag, std::move(handler)); }, args_);
  }

 private:
  Function* function_;
  std::tuple<Args...> args_;
};

/// `start<T>(token, diag, &function, args...)`: the one-line body of every public async_x.
template <class T, class Token, class Function, class... Args>
auto start(Token&& token, diagnostics* diag, Function* function, Args&&... args) {
  return initiate<T>(std::forward<Token>(token), diag,
                     BoundOperation<T, Function, std::decay_t<Args>...>(function, std::forward<Args>(args)...));
}

}  // namespace detail
}  // namespace tinker
