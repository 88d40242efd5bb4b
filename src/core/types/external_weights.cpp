// Checks of the external-weights options (include/tinker/types/external_weights.hpp): refused
// before anything is sent, each message naming its field.
#include <tinker/error.hpp>
#include <tinker/types/external_weights.hpp>

#include <string>

namespace tinker {

void check_save_weights_external_options(const std::string& name, const SaveWeightsExternalOptions& options) {
  constexpr const char* call = "save_weights_external: ";
  if (name.empty()) throw error(errc::invalid_argument, std::string(call) + "name must not be empty");
  if (options.ttl_seconds && (*options.ttl_seconds < SaveWeightsExternalOptions::min_ttl_seconds ||
                              *options.ttl_seconds > SaveWeightsExternalOptions::max_ttl_seconds)) {
    throw error(errc::invalid_argument, std::string(call) + "ttl_seconds must be " +
                                            std::to_string(SaveWeightsExternalOptions::min_ttl_seconds) + ".." +
                                            std::to_string(SaveWeightsExternalOptions::max_ttl_seconds) +
                                            " (one hour to ten years), got " + std::to_string(*options.ttl_seconds));
  }
  if (options.age_encryption_recipients) {
    if (options.age_encryption_recipients->empty()) {
      throw error(errc::invalid_argument,
                  std::string(call) + "age_encryption_recipients must hold at least one recipient when given");
    }
    for (const std::string& recipient : *options.age_encryption_recipients) {
      if (recipient.empty()) {
        throw error(errc::invalid_argument, std::string(call) + "age_encryption_recipients: a recipient is empty");
      }
    }
  }
}

}  // namespace tinker
