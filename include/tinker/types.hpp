// All wire types of the Tinker API.
#pragma once

#include <tinker/types/checkpoint.hpp>
#include <tinker/types/checkpoint_search.hpp>
#include <tinker/types/common.hpp>
#include <tinker/types/datum.hpp>
#include <tinker/types/external_weights.hpp>
#include <tinker/types/futures.hpp>
#include <tinker/types/futures_batch.hpp>
#include <tinker/types/model_input.hpp>
#include <tinker/types/optimizer.hpp>
#include <tinker/types/sampling.hpp>
#include <tinker/types/search.hpp>
#include <tinker/types/session.hpp>
#include <tinker/types/session_status.hpp>
#include <tinker/types/telemetry.hpp>
#include <tinker/types/tensor.hpp>
#include <tinker/types/training.hpp>
