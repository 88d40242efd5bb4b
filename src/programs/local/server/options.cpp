#include <tinker/local/server.hpp>

#include <algorithm>

namespace tinker::local {

std::vector<CatalogueEntry> default_catalogue() {
  std::vector<CatalogueEntry> catalogue;
  catalogue.emplace_back("tinker-local/tiny-lm", 2048);
  // Stand-ins named like real models, so scripts written for the service run unchanged.
  catalogue.emplace_back("Qwen/Qwen3-8B", 32768);
  catalogue.emplace_back("meta-llama/Llama-3.1-8B", 131072);
  // Keeps the SentencePiece backend covered end to end (server, Hub endpoint, clients).
  catalogue.emplace_back("tinker-local/tiny-lm-sp", 2048, TinyTokenizer::sentencepiece);
  // The vision model: images in, rendered in Qwen3.5's chat format (its tokenizer has the markup).
  CatalogueEntry& vision = catalogue.emplace_back("tinker-local/tiny-vl", 2048, TinyTokenizer::byte_level_bpe_vl);
  vision.vision = true;
  return catalogue;
}

bool AuditReport::ok() const noexcept {
  return std::all_of(models.begin(), models.end(), [](const ModelAudit& m) { return m.exactly_once_in_order; });
}

}  // namespace tinker::local
