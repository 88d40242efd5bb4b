// The asample body, written directly: it is encoded once per sample, and the schema-driven
// encoder (json_schema.hpp) spends about 5,000 instructions on its dozen fields, a tenth of the
// SDK's whole cost per sample. The text is the same as append_json's, byte for byte
// (test/unit/core/wire/sample_body_test.cpp compares the two).
#pragma once

#include <tinker/types/sampling.hpp>

#include <string>

namespace tinker::wire {

/// Appends `request` as JSON to `out`, as append_json(request, out) does (the same text, the
/// same errors). Requests of the shape samplers send (token chunks, no stop condition, no
/// alternative addressing) are written directly; any other goes through append_json.
void append_sample_body(const SampleRequest& request, std::string& out);

}  // namespace tinker::wire
