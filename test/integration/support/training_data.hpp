// Small deterministic training batches for tinker-local's tiny model (vocabulary of 1024
// tokens), and helpers to read the server's arrival log.
#pragma once

#include <tinker/local/server.hpp>
#include <tinker/types/datum.hpp>

#include <cstdint>
#include <string_view>
#include <vector>

namespace tinker::test {

/// `count` next-token datums of `length` tokens (ids below 1000), the same for the same seed:
/// model_input = tokens[0..n-1], target_tokens = tokens[1..n], weights = 1.
std::vector<Datum> tiny_batch(std::size_t count, std::size_t length, std::uint32_t seed = 7);

/// Mean of the per-token negative logprobs weighted by the datums' weights (the loss the
/// quickstart prints), from a forward/forward_backward result.
double mean_nll(const std::vector<Datum>& data, const ForwardBackwardOutput& output);

/// The logprobs of every datum, concatenated.
std::vector<float> all_logprobs(const ForwardBackwardOutput& output);

/// The requests of the arrival log whose path ends with `endpoint`, in arrival order.
std::vector<local::RequestRecord> requests_to(const local::AuditReport& audit, std::string_view endpoint);

/// A copy of the audit of one model, safe to keep from a temporary report (throws if the model is not in it).
local::ModelAudit audit_of(const local::AuditReport& audit, std::string_view model_id);

}  // namespace tinker::test
