// JSON codec instantiations: sampling and futures.
#include "core/wire/json_api.hpp"

namespace tinker {

TINKER_INSTANTIATE_JSON(SamplingParams);
TINKER_INSTANTIATE_JSON(SampleRequest);
TINKER_INSTANTIATE_JSON(SampledSequence);
TINKER_INSTANTIATE_JSON(SampleResponse);
TINKER_INSTANTIATE_JSON(UntypedAPIFuture);
TINKER_INSTANTIATE_JSON(RetrieveFutureRequest);
TINKER_INSTANTIATE_JSON(TryAgainResponse);
TINKER_INSTANTIATE_JSON(FutureMetadataResponse);
TINKER_INSTANTIATE_JSON(RequestFailedResponse);
TINKER_INSTANTIATE_JSON(SamplingSessionFuturesTarget);
TINKER_INSTANTIATE_JSON(FuturesRetrieveRequest);
TINKER_INSTANTIATE_JSON(FutureCompletion);
TINKER_INSTANTIATE_JSON(FuturesRetrieveResponse);

}  // namespace tinker
