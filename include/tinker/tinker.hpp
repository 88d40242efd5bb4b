// Umbrella header of tinker-cpp.
#pragma once

#include <tinker/codec.hpp>
#include <tinker/config.hpp>
#include <tinker/error.hpp>
#include <tinker/tokenizer.hpp>
#include <tinker/types.hpp>
#include <tinker/version.hpp>
