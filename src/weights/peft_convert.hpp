// What the PEFT converter refuses, shared with describe_base_model so both say the same.
#pragma once

#include <string_view>

namespace tinker::weights::detail {

/// Why a base of config.json "model_type" `model_type` gets no PEFT adapter, or "" when it can.
/// By exact model_type: a later model of the same family that serving frameworks can apply LoRA to
/// should not be caught by it.
std::string_view peft_refusal_reason(std::string_view model_type) noexcept;

}  // namespace tinker::weights::detail
