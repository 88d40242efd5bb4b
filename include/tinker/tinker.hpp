// Umbrella header of tinker-cpp.
#pragma once

#include <tinker/async.hpp>
#include <tinker/codec.hpp>
#include <tinker/config.hpp>
#include <tinker/download.hpp>
#include <tinker/error.hpp>
#include <tinker/future.hpp>
#include <tinker/log.hpp>
#include <tinker/losses.hpp>
#include <tinker/renderers.hpp>
#include <tinker/rest_client.hpp>
#include <tinker/sampling_client.hpp>
#include <tinker/service_client.hpp>
#include <tinker/tokenizer.hpp>
#include <tinker/tokenizer_hub.hpp>
#include <tinker/training_client.hpp>
#include <tinker/types.hpp>
#include <tinker/version.hpp>
