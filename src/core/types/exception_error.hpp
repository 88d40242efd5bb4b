// The one mapping from an exception to an error code and diagnostics, for every place where an
// operation turns what escaped it into the error its caller sees (doc/architecture.md#errors-and-diagnostics).
#pragma once

#include <tinker/error.hpp>

#include <boost/asio/error.hpp>
#include <boost/system/system_error.hpp>

#include <exception>
#include <optional>
#include <string>
#include <string_view>

namespace tinker::detail {

/// How exceptions other than tinker::error become codes; a tinker::error always keeps its own
/// code and diagnostics. The defaults suit a decoder or an encoder: a system_error keeps its
/// code, anything else is the server's answer we could not read (a protocol error).
class ExceptionMapping {
 public:
  ExceptionMapping() = default;

  /// The code of an Asio operation_aborted (a co_await begun after a cancellation); unset, it
  /// is a system_error like any other.
  std::optional<errc> aborted;
  /// Replaces what() in the message of an operation_aborted when not empty.
  std::string_view aborted_message;
  /// The code of any other boost::system::system_error; unset, the exception's own code.
  std::optional<errc> system_error;
  /// The code of any other std::exception.
  errc other = errc::protocol_error;
  /// Put before what() in the message of such an exception.
  std::string_view other_prefix;
};

/// Inside a catch block: the code of the exception in flight, mapped by `mapping`. `diag` gets
/// a tinker::error's diagnostics, else the exception's what() as its message (its other fields
/// are kept). Exceptions that are no std::exception propagate.
inline boost::system::error_code current_exception_error(diagnostics& diag, const ExceptionMapping& mapping = {}) {
  try {
    throw;
  } catch (const error& e) {
    diag = e.diag();
    return e.code();
  } catch (const boost::system::system_error& e) {
    const bool aborted = mapping.aborted && e.code() == boost::asio::error::operation_aborted;
    diag.message = aborted && !mapping.aborted_message.empty() ? std::string(mapping.aborted_message) : e.what();
    if (aborted) return make_error_code(*mapping.aborted);
    return mapping.system_error ? make_error_code(*mapping.system_error) : e.code();
  } catch (const std::exception& e) {
    diag.message = std::string(mapping.other_prefix) + e.what();
    return make_error_code(mapping.other);
  }
}

}  // namespace tinker::detail
