// The scenarios of tinker-bench (doc/bench.md#scenarios). Each sets up its clients, runs its measured phase between
// meter->start() and meter->stop(), and writes its parameters and figures into `report`; the runner adds the
// common fields. Named coroutines taking their arguments by value (doc/architecture.md, GCC 12 rules).
#pragma once

#include "programs/bench/context.hpp"
#include "programs/bench/settings.hpp"

#include <boost/asio/awaitable.hpp>

namespace tinker::bench {

boost::asio::awaitable<void> run_sample(Bench* bench, SampleSettings settings, Report* report, Meter* meter);
boost::asio::awaitable<void> run_logprobs(Bench* bench, LogprobsSettings settings, Report* report, Meter* meter);
boost::asio::awaitable<void> run_train(Bench* bench, TrainSettings settings, Report* report, Meter* meter);
boost::asio::awaitable<void> run_rl(Bench* bench, RlSettings settings, Report* report, Meter* meter);
boost::asio::awaitable<void> run_checkpoint(Bench* bench, CheckpointSettings settings, Report* report, Meter* meter);

/// `sample --compare-raw` (doc/bench.md#compare-raw): alternating points of the raw Beast loop and the SDK with the
/// same request shape against the forked local server; writes the "compare_raw" object.
boost::asio::awaitable<void> run_compare_raw(Bench* bench, SampleSettings settings, SamplingClient sampler,
                                             Report* report);

}  // namespace tinker::bench
