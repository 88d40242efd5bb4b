// A check that a call throws tinker::error with a given code and a message naming what went wrong.
#pragma once

#include <tinker/error.hpp>

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace tinker::test {

/// Runs `call` and checks it throws tinker::error with `code` and a what() containing `text`.
template <class Call>
void expect_tinker_error(errc code, std::string_view text, Call&& call) {
  try {
    call();
    ADD_FAILURE() << "expected an error mentioning \"" << text << "\", got none";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), make_error_code(code)) << e.what();
    EXPECT_NE(std::string_view(e.what()).find(text), std::string_view::npos)
        << "\"" << e.what() << "\" does not contain \"" << text << "\"";
  }
}

}  // namespace tinker::test
