// make_matcher: the choice between a hand-written scanner and PCRE2.
#include "tokenizer/text/matcher.hpp"

namespace tinker::tokenizer_detail {

std::unique_ptr<Matcher> make_matcher(std::string_view pattern) {
  return make_regex_matcher(pattern);
}

}  // namespace tinker::tokenizer_detail
