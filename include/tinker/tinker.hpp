/// \file
/// Umbrella header of tinker-cpp: includes every public header of the asynchronous API (the
/// blocking facade is <tinker/sync/service_client.hpp>, tinker-local's embedding API
/// <tinker/local/server.hpp>).
#pragma once

#include <tinker/async.hpp>
#include <tinker/codec.hpp>
#include <tinker/config.hpp>
#include <tinker/download.hpp>
#include <tinker/error.hpp>
#include <tinker/future.hpp>
#include <tinker/log.hpp>
#include <tinker/losses.hpp>
#include <tinker/model_name.hpp>
#include <tinker/renderers.hpp>
#include <tinker/rest_client.hpp>
#include <tinker/sampling_client.hpp>
#include <tinker/service_client.hpp>
#include <tinker/tokenizer.hpp>
#include <tinker/tokenizer_hub.hpp>
#include <tinker/training_client.hpp>
#include <tinker/types.hpp>
#include <tinker/version.hpp>

/// \mainpage tinker-cpp API reference
///
/// tinker-cpp is a C++20 SDK for the Tinker fine-tuning API: LoRA training and sampling on remote
/// GPUs, driven from C++ with `co_await` or a blocking facade. This reference is generated from
/// the public headers in `include/tinker/`; the guides live in the repository's `doc/` directory
/// (`doc/README.md` is their index).
///
/// \section mainpage_start Where to start
///
/// - tinker::ServiceClient (<tinker/service_client.hpp>): the entry point; creates a
///   tinker::TrainingClient (forward_backward, optim_step, checkpoints), a tinker::SamplingClient
///   (sample, compute_logprobs) and a tinker::RestClient (runs, checkpoints, sessions, billing,
///   downloads). Guides: `doc/service.md`, `doc/training.md`, `doc/sampling.md`, `doc/rest.md`.
/// - tinker::sync::ServiceClient (<tinker/sync/service_client.hpp>): the same, blocking, for
///   scripts and tools.
/// - tinker::Future: what every submitted operation completes with; await its result.
/// - The wire types in <tinker/types.hpp> (tinker::Datum, tinker::ModelInput,
///   tinker::TensorData, tinker::SamplingParams, ...), their JSON and protobuf codecs in
///   <tinker/codec.hpp>.
/// - tinker::Tokenizer and get_tokenizer_for (<tinker/tokenizer.hpp>, `doc/tokenizers.md`),
///   chat renderers in tinker::renderers (`doc/renderers.md`), custom losses in tinker::losses.
/// - tinker::local::Server (<tinker/local/server.hpp>): the offline Tinker-compatible server
///   (`doc/local.md`).
///
/// \section mainpage_async The asynchronous API
///
/// Every operation is `async_x(args..., token)` with the completion signature
/// `void(boost::system::error_code, T)`, so one API serves `co_await` (with
/// `tinker::use_awaitable`, which throws tinker::error with the failure's diagnostics),
/// `boost::asio::deferred` (the default token), `boost::asio::use_future`,
/// `boost::asio::as_tuple(...)` and callbacks. Each operation also has an overload taking a
/// tinker::diagnostics& that receives the HTTP status, request id, server message and category of
/// a failure (`doc/architecture.md#async-api-shape`).
///
/// Submitting operations (forward_backward, optim_step, sample, ...) complete with a
/// tinker::Future once the server accepted the request; awaiting the future gives the result.
/// That is what lets a training loop submit a forward_backward and an optim_step back to back
/// (`doc/training.md#ordering-and-pipelining`).
///
/// \section mainpage_threads Threads
///
/// A client lives on the executor it is given: one io_context run by one thread
/// (`doc/architecture.md#threading-and-ordering`). Operations may be initiated from any thread;
/// callbacks the SDK calls (queue-state callbacks, custom losses, download progress) run on that
/// io thread and must not block. The blocking facade owns such a thread itself, and refuses
/// (errc::invalid_argument) to be called from it.
///
/// \section mainpage_errors Errors
///
/// Failures are tinker::errc codes (`doc/architecture.md#errors-and-diagnostics`); their details
/// travel in tinker::diagnostics, and together in the exception tinker::error. No message ever
/// contains a credential.

/// \namespace tinker
/// The SDK: clients (ServiceClient, TrainingClient, SamplingClient, RestClient), Future, the wire
/// types and their codecs, errors and options, tokenizers.

/// \namespace tinker::sync
/// The blocking facade: each call starts the asynchronous operation and waits for it on the
/// caller's thread (tinker::sync::ServiceClient).
