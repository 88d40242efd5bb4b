// Lets the codec build a RawJson from text it has already validated and normalised.
#pragma once

#include <tinker/types/common.hpp>

namespace tinker {

struct RawJsonAccess {
  static RawJson make(std::string normalised_text) {
    return RawJson(RawJson::trusted_tag{}, std::move(normalised_text));
  }
};

}  // namespace tinker
