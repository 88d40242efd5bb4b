# The SDK's layers, bottom up: tinker_layer(<name> PATHS <folders under src/> USES <layers below it>).
# This file is the one table of the layers. src/CMakeLists.txt builds one library per layer from
# it; cmake/TinkerCheckLayers.cmake checks every include in src/ against it; and
# cmake/TinkerCheckLayerDoc.cmake checks that the layer table in doc/architecture.md says the same
# (both run as tests and as the first steps of CI). A layer owns folders only: a file belongs to
# the layer whose folder holds it most closely ("programs/local" beats a hypothetical "programs").

# Value types, options, errors, config and the JSON/protobuf/zstd codecs of the protocol.
tinker_layer(core PATHS core)
# Asio, Asio SSL and Beast compiled once (separate compilation) for the SDK and tinker-local.
tinker_layer(asio PATHS asio)
# Connection pools, TLS, proxies, transport retries, streaming downloads: the SDK's Beast/OpenSSL code.
tinker_layer(http PATHS http USES core asio)
# One function per endpoint, the endpoint-level retries and the billing pause.
tinker_layer(api PATHS api USES http)
# Tokenizers that need no network: tokenizer.json, SentencePiece, tiktoken, text processing.
tinker_layer(text PATHS text USES core)
# Image files (header, decoding, PNG encoding) and the vision families' image token counts.
tinker_layer(image PATHS image USES core)
# Model weights on disk: safetensors and GGUF files, and turning a Tinker LoRA adapter into a PEFT
# adapter, a merged Hugging Face model or a llama.cpp adapter (doc/export.md).
tinker_layer(weights PATHS weights USES core)
# Finding a model's tokenizer: name resolution, the file search, the Hub download, the cache.
tinker_layer(tokenizer PATHS tokenizer USES text http)
# The Hugging Face Hub's API: uploads (repo creation, LFS, commits) for `tinker checkpoint push-hf`,
# and model repo snapshots into the hub cache for `tinker checkpoint export --base`.
tinker_layer(hub PATHS hub USES tokenizer)
# ServiceClient, TrainingClient, SamplingClient, RestClient, Future<T> (one folder per subsystem).
tinker_layer(client PATHS client USES api tokenizer)
# Chat renderers: messages <-> tokens and weights.
tinker_layer(renderers PATHS renderers USES text image)
# The blocking facades.
tinker_layer(sync PATHS sync USES client)
# Ready-made custom losses for forward_backward_custom (with blocking forms over the facades).
tinker_layer(losses PATHS losses USES sync)
# tinker-local: shares types, codecs, tokenizers and the compiled Asio with the SDK, nothing else.
tinker_layer(local PATHS programs/local USES core text asio image weights)
# The `tinker` command line: the public API only.
tinker_layer(cli PATHS programs/cli)
# tinker-bench, the benchmark harness (doc/bench.md): the public API only, tinker-local through its public header.
tinker_layer(bench PATHS programs/bench)
# The cookbook's training loops (doc/training-loops.md): run directories, resume, the supervised,
# RL and preference trainers, evaluators, schedules, plots; the public API only, library tinker::train.
tinker_layer(train PATHS train)
