// Image chunks checked when a request is submitted (doc/local.md#images). The service answers a
// request whose image does not match its expected_tokens with HTTP 400; so does tinker-local,
// before the request takes a seq_id or a ticket, so the client reuses the seq_id as for any
// refused submit. The model checks the same again when it runs (a test driving the engine
// directly gets a failed future instead).
//
// Checking means decoding the image on the io thread: the token count from the header comes
// first, and an image larger than the model's context is refused before any pixel is read, so
// what is decoded stays within about a context's worth of 32x32 blocks.
#include "programs/local/engine/engine_impl.hpp"
#include "programs/local/model/images.hpp"

#include <variant>

namespace tinker::local {
namespace {

// "tinker-local/tiny-vl" or "A, B", or a sentence saying there is none.
std::string vision_models_of(const std::vector<CatalogueEntry>& catalogue) {
  std::string names;
  for (const CatalogueEntry& entry : catalogue) {
    if (entry.vision) names += (names.empty() ? "" : ", ") + entry.name;
  }
  return names.empty() ? "this server serves no vision model" : "image chunks need a vision model: " + names;
}

}  // namespace

void Engine::Impl::check_image_chunks(const ModelInput& input, const std::string& path,
                                      const std::string& base_model) const {
  const CatalogueEntry* entry = find_base(base_model);
  if (entry == nullptr) return;  // the operation fails on its own, saying so
  for (std::size_t j = 0; j < input.chunks.size(); ++j) {
    const ModelInputChunk& chunk = input.chunks[j];
    const bool image = std::holds_alternative<ImageChunk>(chunk);
    if (!image && !std::holds_alternative<ImageAssetPointerChunk>(chunk)) continue;
    const std::string chunk_path = path + ".chunks[" + std::to_string(j) + "]";
    if (!entry->vision) {
      throw HttpError(400, chunk_path + ": base model " + entry->name + " does not take images (" +
                               vision_models_of(options.catalogue) + ")");
    }
    if (!image) {
      throw HttpError(400, chunk_path +
                               ": image_asset_pointer chunks are not supported (tinker-local has no asset "
                               "store); send the image's bytes in an image chunk");
    }
    try {
      model::read_image_chunk(std::get<ImageChunk>(chunk), chunk_path, entry->max_context_length);
    } catch (const UserError& e) {
      throw HttpError(400, e.what());
    }
  }
}

void Engine::Impl::check_image_chunks(const ForwardBackwardInput& input, const std::string& base_model) const {
  for (std::size_t i = 0; i < input.data.size(); ++i) {
    check_image_chunks(input.data[i].model_input, "data[" + std::to_string(i) + "].model_input", base_model);
  }
}

}  // namespace tinker::local
