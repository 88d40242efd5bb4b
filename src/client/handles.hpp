// The handles behind the public clients, seen from inside the client: the state of a
// ServiceClient (ClientHolder), of a Future<T> (FutureCore), of a TrainingClient and of a
// SamplingClient, and the type-erased completion handler of every async call. The public headers
// declare them in tinker::detail, so they keep that name; this makes them visible by their short
// names in every subsystem namespace tinker::client::<folder>.
#pragma once

#include <tinker/async.hpp>
#include <tinker/future.hpp>
#include <tinker/rest_client.hpp>
#include <tinker/sampling_client.hpp>
#include <tinker/service_client.hpp>
#include <tinker/training_client.hpp>

namespace tinker::client {

using detail::ClientHolder;
using detail::ErasedResult;
using detail::FutureCore;
using detail::Handler;
using detail::HolderPtr;
using detail::SamplingState;
using detail::TrainingPtr;
using detail::TrainingState;

}  // namespace tinker::client
