/// @file
/// The async API shape shared by every client, and `tinker::use_awaitable`, the completion token
/// to prefer in coroutines (`doc/architecture.md#async-api-shape`).
///
/// Every operation is `async_x(args..., token)` with the completion signature
/// `void(boost::system::error_code, T)`, so one API serves `co_await` (with `tinker::use_awaitable`
/// or `boost::asio::deferred`), `boost::asio::use_future`, `boost::asio::as_tuple(...)`,
/// `boost::asio::redirect_error(...)`, `boost::asio::experimental::make_parallel_group(...)` and
/// plain callbacks. Each operation also has an overload taking `tinker::diagnostics&` that receives
/// the HTTP status, request id, server message and category of a failure.
#pragma once

#include <tinker/error.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
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

/// The completion token to use in coroutines: `co_await op(..., tinker::use_awaitable)` returns
/// the operation's value, or throws `tinker::error` carrying the operation's diagnostics (HTTP
/// status, request id, server message, category, retry hint) where Asio's own
/// `boost::asio::use_awaitable` would throw a bare `boost::system::system_error` with only the
/// code.
///
/// It is a real completion token (an `async_result` specialisation, as Boost.MySQL's
/// `with_diagnostics` is), so it composes with Asio's adapters like `boost::asio::use_awaitable`
/// does:
///
// clang-format off
/// | expression | `co_await` gives | on failure |
/// |---|---|---|
/// | `op()` (the default token) or `op(tinker::use_awaitable)` | `T` | throws `tinker::error` with the diagnostics |
/// | `op(diag, tinker::use_awaitable)` | `T` | throws `tinker::error`; `diag` holds the same diagnostics |
/// | `op(as_tuple(tinker::use_awaitable))` | `std::tuple<error_code, T>` | no throw; diagnostics only through the `diag` overload |
/// | `op(redirect_error(tinker::use_awaitable, ec))` | `T` (value-initialised on failure) | no throw; sets `ec`; diagnostics only through the `diag` overload |
/// | `op(bind_cancellation_slot(slot, tinker::use_awaitable))` | `T` | as the first row; emitting on `slot` cancels the operation (`errc::cancelled`) |
/// | `op(deferred)(tinker::use_awaitable)` | `T` | as the first row (a deferred operation keeps its diagnostics) |
/// | `make_parallel_group(op1(deferred), op2(deferred)).async_wait(wait_for_one(), tinker::use_awaitable)` | `std::tuple<order, error_code, T1, error_code, T2>` | no throw; each operation's diagnostics only through its `diag` overload |
// clang-format on
///
/// The rule behind the table: a completion signature that starts with an `error_code` is
/// awaited as by `boost::asio::use_awaitable`, but a failure throws `tinker::error`; any other
/// signature (what `as_tuple`, `redirect_error` and `parallel_group` hand the token) is awaited
/// exactly as by `boost::asio::use_awaitable`. The token also works with Asio's own operations
/// (`timer.async_wait(tinker::use_awaitable)`): their failures throw `tinker::error` with empty
/// diagnostics.
///
/// Like `boost::asio::use_awaitable`, the operation starts when the returned awaitable is first
/// awaited, not when `async_x` is called (which matters for the TrainingClient's submission
/// order, `doc/training.md#ordering-and-pipelining`).
///
/// Cost: the diagnostics a failure needs live in the awaiting coroutine frame, so the plain
/// `co_await` path allocates nothing on the heap beyond what `boost::asio::use_awaitable` does
/// (coroutine frames come from Asio's per-thread recycling allocator).
///
/// @code
/// try {
///   TrainingRun run = co_await rest.async_get_training_run(id, tinker::use_awaitable);
/// } catch (const tinker::error& e) {
///   std::cerr << e.what() << " (HTTP " << e.diag().http_status << ")\n";
/// }
/// auto [code, run] = co_await rest.async_get_training_run(id, boost::asio::as_tuple(tinker::use_awaitable));
/// @endcode
class use_awaitable_t {
 public:
  /// The token carries no state; `tinker::use_awaitable` is the instance to use.
  constexpr use_awaitable_t() = default;
};

/// The instance of `tinker::use_awaitable_t` to pass as the last argument of an `async_x` call.
inline constexpr use_awaitable_t use_awaitable{};

/// The default token of every `async_x` (Boost 1.81 has no default completion token of its own):
/// `tinker::use_awaitable`, so a plain `co_await client.async_x(...)` returns the value or throws
/// `tinker::error` with the server's request id and message, as Boost.MySQL's default token does.
/// Any other token is passed explicitly: `boost::asio::deferred` to compose operations (parallel
/// groups), `boost::asio::use_future`, `as_tuple(...)`, a callback.
using default_token = use_awaitable_t;

namespace detail {

/// The shared state behind a ServiceClient and every client it made (defined in src/).
class ClientHolder;
using HolderPtr = std::shared_ptr<ClientHolder>;
/// The executor a holder's clients run on.
boost::asio::any_io_executor holder_executor(const ClientHolder& holder) noexcept;

template <class T>
using Handler = boost::asio::any_completion_handler<void(boost::system::error_code, T)>;

// ---- tinker::use_awaitable: how the diagnostics reach the token ------------------------------
//
// Every tinker operation passes its `diagnostics*` (the user's, or null) to async_initiate as an
// initiation argument (see `initiate` below). Asio's adapters (as_tuple, redirect_error,
// bind_cancellation_slot, deferred) wrap the initiation but forward its arguments, so the
// token's async_result finds the pointer among them by type, as Boost.MySQL's with_diagnostics
// does. A null pointer is pointed at a `diagnostics` in the token's own coroutine frame, which
// lives exactly as long as the operation: no heap allocation. The operation fills the
// diagnostics before it completes; the frame then throws them with the code.

// The address of the first `diagnostics*` among an initiation's arguments, or null.
inline diagnostics** diagnostics_slot() noexcept {
  return nullptr;
}

template <class First, class... Rest>
diagnostics** diagnostics_slot(First& first, Rest&... rest) noexcept {
  if constexpr (std::is_same_v<First, diagnostics*>) {
    return &first;
  } else {
    (void)first;
    return diagnostics_slot(rest...);
  }
}

// The diagnostics the operation will fill: the caller's, else `own` (a null `diagnostics*` is
// pointed at it). Null when the operation takes no diagnostics (an Asio operation).
template <class... Args>
const diagnostics* diagnostics_target(diagnostics& own, Args&... args) noexcept {
  diagnostics** slot = diagnostics_slot(args...);
  if (slot == nullptr) return nullptr;
  if (*slot == nullptr) *slot = &own;
  return *slot;
}

inline void throw_if_failed(const boost::system::error_code& code, const diagnostics* diag) {
  if (!code) return;
  if (diag == nullptr) throw error(code);
  throw error(code, *diag);
}

// What `co_await` gives for a completion `void(error_code, Values...)`: nothing, the value, or
// a tuple of the values (as boost::asio::use_awaitable).
template <class... Values>
struct AwaitedValue {
  using type = std::tuple<Values...>;
};
template <>
struct AwaitedValue<> {
  using type = void;
};
template <class Value>
struct AwaitedValue<Value> {
  using type = Value;
};

template <class... Values>
typename AwaitedValue<Values...>::type take_values(std::tuple<boost::system::error_code, Values...>&& result) {
  if constexpr (sizeof...(Values) == 1) {
    return std::move(std::get<1>(result));
  } else {
    return std::apply(
        [](boost::system::error_code, Values&&... values) { return std::tuple<Values...>(std::move(values)...); },
        std::move(result));
  }
}

// Runs an initiation whose completion is `void(error_code, Values...)` in a coroutine frame that
// owns the diagnostics, and throws tinker::error on failure. Named static coroutines taking
// their arguments by value (toolchain rule: no coroutine lambdas with captures).
template <class... Values>
class AwaitOrThrow {
 public:
  using value_type = typename AwaitedValue<Values...>::type;
  using signature = void(boost::system::error_code, Values...);

  template <class Initiation, class... Args>
  static boost::asio::awaitable<value_type> run(Initiation initiation, Args... args) {
    diagnostics own_diag;
    const diagnostics* diag = diagnostics_target(own_diag, args...);
    auto as_tuple_token = boost::asio::as_tuple(boost::asio::use_awaitable);
    auto result = co_await boost::asio::async_initiate<decltype(as_tuple_token), signature>(
        std::move(initiation), as_tuple_token, std::move(args)...);
    throw_if_failed(std::get<0>(result), diag);
    if constexpr (sizeof...(Values) != 0) co_return take_values(std::move(result));
  }
};

// ---- every public async_x --------------------------------------------------------------------

// The initiation every operation hands async_initiate: erases the token's handler and starts
// the operation with the diagnostics pointer, which travels as an initiation argument so that
// tokens (tinker::use_awaitable) can find and redirect it.
template <class T>
class Launch {
 public:
  template <class CompletionHandler, class Initiation>
  void operator()(CompletionHandler&& handler, diagnostics* diag, Initiation initiation) const {
    initiation(Handler<T>(std::forward<CompletionHandler>(handler)), diag);
  }
};

// Starts an operation for any token. `initiation(Handler<T>, diagnostics* or nullptr)` must
// never complete inline (it posts).
template <class T, class Token, class Initiation>
auto initiate(Token&& token, diagnostics* diag, Initiation initiation) {
  return boost::asio::async_initiate<Token, void(boost::system::error_code, T)>(Launch<T>(), token, diag,
                                                                                std::move(initiation));
}

// Binds the free function behind one public operation (defined in src/) to its arguments. The
// function takes the arguments, then the diagnostics (may be null) and the handler.
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

// `start<T>(token, diag, &function, args...)`: the one-line body of every public async_x.
template <class T, class Token, class Function, class... Args>
auto start(Token&& token, diagnostics* diag, Function* function, Args&&... args) {
  return initiate<T>(std::forward<Token>(token), diag,
                     BoundOperation<T, Function, std::decay_t<Args>...>(function, std::forward<Args>(args)...));
}

}  // namespace detail
}  // namespace tinker

namespace boost::asio {

/// `tinker::use_awaitable` for completions that start with an error code: awaited as by
/// `boost::asio::use_awaitable`, with a failure thrown as `tinker::error` carrying the
/// diagnostics the operation filled.
template <class R, class... Values>
class async_result<tinker::use_awaitable_t, R(boost::system::error_code, Values...)> {
 public:
  /// What `co_await` gives: nothing, the value, or a tuple of the values.
  using return_type = awaitable<typename tinker::detail::AwaitedValue<std::decay_t<Values>...>::type>;

  /// Starts nothing yet: returns the awaitable that runs `initiation` when first awaited.
  template <class Initiation, class RawToken, class... Args>
  static return_type initiate(Initiation&& initiation, RawToken&&, Args&&... args) {
    return tinker::detail::AwaitOrThrow<std::decay_t<Values>...>::template run<std::decay_t<Initiation>,
                                                                               std::decay_t<Args>...>(
        std::forward<Initiation>(initiation), std::forward<Args>(args)...);
  }
};

/// `tinker::use_awaitable` for any other completion (after `as_tuple` or `redirect_error`, or a
/// `parallel_group`'s): exactly `boost::asio::use_awaitable`.
template <class... Signatures>
class async_result<tinker::use_awaitable_t, Signatures...> : public async_result<use_awaitable_t<>, Signatures...> {
 public:
  /// Hands the initiation and its arguments to `boost::asio::use_awaitable`.
  template <class Initiation, class RawToken, class... Args>
  static auto initiate(Initiation&& initiation, RawToken&&, Args&&... args) {
    use_awaitable_t<> asio_token;
    return async_initiate<use_awaitable_t<>, Signatures...>(std::forward<Initiation>(initiation), asio_token,
                                                            std::forward<Args>(args)...);
  }
};

}  // namespace boost::asio
