// detail::current_exception_error: the one mapping from an exception to an error code.
#include "core/types/exception_error.hpp"

#include <boost/asio/error.hpp>

#include <gtest/gtest.h>

#include <stdexcept>

namespace tinker::detail {
namespace {

template <class Exception>
boost::system::error_code map(const Exception& exception, diagnostics& diag, const ExceptionMapping& mapping = {}) {
  try {
    throw exception;
  } catch (...) {
    return current_exception_error(diag, mapping);
  }
}

ExceptionMapping task_like() {
  ExceptionMapping mapping;
  mapping.aborted = errc::cancelled;
  mapping.aborted_message = "cancelled while waiting";
  mapping.system_error = errc::connection_failed;
  mapping.other = errc::invalid_argument;
  mapping.other_prefix = "internal: ";
  return mapping;
}

TEST(ExceptionError, ATinkerErrorKeepsItsCodeAndDiagnostics) {
  diagnostics given;
  given.message = "bad field";
  given.request_id = "req-1";
  diagnostics diag;
  EXPECT_EQ(map(error(make_error_code(errc::invalid_argument), given), diag, task_like()),
            make_error_code(errc::invalid_argument));
  EXPECT_EQ(diag, given);
}

TEST(ExceptionError, ByDefaultASystemErrorKeepsItsCodeAndAnythingElseIsAProtocolError) {
  diagnostics diag;
  const boost::system::system_error refused(make_error_code(boost::asio::error::connection_refused), "connect");
  EXPECT_EQ(map(refused, diag), make_error_code(boost::asio::error::connection_refused));
  EXPECT_EQ(diag.message, refused.what());
  EXPECT_EQ(map(std::runtime_error("odd body"), diag), make_error_code(errc::protocol_error));
  EXPECT_EQ(diag.message, "odd body");
}

TEST(ExceptionError, AMappingRenamesAbortedSystemAndOtherExceptions) {
  diagnostics diag;
  const boost::system::system_error aborted(make_error_code(boost::asio::error::operation_aborted));
  EXPECT_EQ(map(aborted, diag, task_like()), make_error_code(errc::cancelled));
  EXPECT_EQ(diag.message, "cancelled while waiting");
  const boost::system::system_error reset(make_error_code(boost::asio::error::connection_reset));
  EXPECT_EQ(map(reset, diag, task_like()), make_error_code(errc::connection_failed));
  EXPECT_EQ(diag.message, reset.what());
  EXPECT_EQ(map(std::logic_error("bug"), diag, task_like()), make_error_code(errc::invalid_argument));
  EXPECT_EQ(diag.message, "internal: bug");
}

}  // namespace
}  // namespace tinker::detail
