// Structural checks of TensorData shared by TensorData::validate and the codecs.
#pragma once

#include <tinker/types/tensor.hpp>

#include <string>

namespace tinker::detail {

/// Empty if the tensor is well-formed (shape matches the values, CSR indices consistent and in
/// range), else a description of the first problem, relative to the tensor ("shape [2, 3] has 6
/// elements but data has 5 values").
std::string tensor_structure_problem(const TensorData& tensor);

}  // namespace tinker::detail
