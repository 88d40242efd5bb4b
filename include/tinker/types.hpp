// All wire types of the Tinker API.
#pragma once

#include <tinker/types/checkpoint.hpp>
#include <tinker/types/common.hpp>
#include <tinker/types/datum.hpp>
#include <tinker/types/futures.hpp>
#include <tinker/types/model_input.hpp>
#include <tinker/types/sampling.hpp>
#include <tinker/types/session.hpp>
#include <tinker/types/telemetry.hpp>
#include <tinker/types/tensor.hpp>
#include <tinker/types/training.hpp>
