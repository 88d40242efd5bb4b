/// \file
/// tinker-local's base models as Hugging Face model directories (`doc/local.md#model-directories`):
/// written by `export_model` (`tinker-local export-model`), served from such a directory by a
/// catalogue entry from `model_dir_entry` (`tinker-local --model-dir`). With a merged model written
/// by `tinker::weights::build_merged_model` against an exported base, a merge is checked end to end.
///
/// The directory:
///
///     config.json              model_type "tinker_local_tiny", the sizes, torch_dtype, and
///                              "tinker_local_tokenizer": the kind of tokenizer it runs over
///     model.safetensors        every frozen weight, Hugging Face names, Linear weights [out, in]
///     tokenizer.json, ...      the tokenizer's files as the Hugging Face cache holds them
#pragma once

#include <tinker/local/server.hpp>
#include <tinker/safetensors.hpp>

#include <filesystem>
#include <string>
#include <string_view>

namespace tinker::local {

/// Writes the base model `model` of `options.catalogue` (its seeded weights, or those of its
/// `model_dir`) to `output_dir` in `dtype` (f32: exact; bf16 and f16 round to nearest even), with
/// the tokenizer files of its kind from `options.hf_hub_cache` (installed there first if missing,
/// under the tokenizer id of `options`). The directory is built under a temporary name and renamed
/// at the end. Throws tinker::error: errc::invalid_argument for a model the catalogue does not
/// hold, a dtype other than f32, bf16 or f16, or an `output_dir` that exists; errc::io_error when
/// writing fails.
void export_model(const ServerOptions& options, std::string_view model, const std::filesystem::path& output_dir,
                  safetensors::Dtype dtype = safetensors::Dtype::f32);

/// A catalogue entry serving the model directory `dir` as `name`: its sizes, context, vision flag
/// and tokenizer kind from `dir`/config.json. Only config.json is read here; the weights are read
/// and checked (every tensor present, of its shape, finite; bf16 and f16 widened to f32) when a
/// Server using the entry starts. Throws tinker::error (errc::invalid_file naming config.json and
/// the key, errc::io_error when it cannot be read).
CatalogueEntry model_dir_entry(std::string name, const std::filesystem::path& dir);

}  // namespace tinker::local
