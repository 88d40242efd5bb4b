// JSON codec instantiations: model input, data and training endpoints.
#include "wire/json_api.hpp"

namespace tinker {

TINKER_INSTANTIATE_JSON(ModelInput);
TINKER_INSTANTIATE_JSON(TensorData);
TINKER_INSTANTIATE_JSON(Datum);
TINKER_INSTANTIATE_JSON(ForwardBackwardInput);
TINKER_INSTANTIATE_JSON(ForwardBackwardOutput);
TINKER_INSTANTIATE_JSON(AdamParams);
TINKER_INSTANTIATE_JSON(LoraConfig);
TINKER_INSTANTIATE_JSON(CreateModelRequest);
TINKER_INSTANTIATE_JSON(CreateModelResponse);
TINKER_INSTANTIATE_JSON(GetInfoRequest);
TINKER_INSTANTIATE_JSON(ModelData);
TINKER_INSTANTIATE_JSON(GetInfoResponse);
TINKER_INSTANTIATE_JSON(UnloadModelRequest);
TINKER_INSTANTIATE_JSON(UnloadModelResponse);
TINKER_INSTANTIATE_JSON(ForwardBackwardRequest);
TINKER_INSTANTIATE_JSON(ForwardRequest);
TINKER_INSTANTIATE_JSON(OptimStepRequest);
TINKER_INSTANTIATE_JSON(OptimStepResponse);
TINKER_INSTANTIATE_JSON(SaveWeightsRequest);
TINKER_INSTANTIATE_JSON(SaveWeightsResponse);
TINKER_INSTANTIATE_JSON(LoadWeightsRequest);
TINKER_INSTANTIATE_JSON(LoadWeightsResponse);
TINKER_INSTANTIATE_JSON(SaveWeightsForSamplerRequest);
TINKER_INSTANTIATE_JSON(SaveWeightsForSamplerResponse);

}  // namespace tinker
