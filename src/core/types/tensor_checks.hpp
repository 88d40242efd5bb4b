// Structural checks of TensorData shared by TensorData::validate and the codecs.
#pragma once

#include <tinker/types/tensor.hpp>

#include <cstddef>
#include <span>
#include <string>

namespace tinker::detail {

/// Empty if the tensor is well-formed (shape matches the values, CSR indices consistent and in
/// range), else a description of the first problem, relative to the tensor ("shape [2, 3] has 6
/// elements but data has 5 values").
std::string tensor_structure_problem(const TensorData& tensor);

/// The index of the first NaN or infinite value, or -1. Checks blocks of values without a branch
/// per value (so that the compiler vectorises it): it runs over every float of every request.
std::ptrdiff_t first_non_finite(std::span<const float> values) noexcept;

/// What TensorData::validate reports, without the field path: empty if the tensor is well-formed
/// and finite. Lets a caller build the path only when there is a problem.
std::string tensor_problem(const TensorData& tensor);

}  // namespace tinker::detail
