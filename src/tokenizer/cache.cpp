// Loading a found tokenizer file by format, and the cache of loaded tokenizers.
//
// The cache inserts a slot for a key under the map's mutex (insert-if-absent, never
// check-then-insert), then loads under the slot's own mutex: callers of one key wait for the
// one load, callers of other keys are not held up by it. A load that throws leaves the slot
// empty, so the next caller tries again.
#include <tinker/error.hpp>
#include <tinker/tokenizer.hpp>
#include <tinker/tokenizer_hub.hpp>

#include <utility>
#include <vector>

namespace tinker {
namespace {

std::string cache_key(const TokenizerRef& ref) {
  // '@' cannot occur in a valid repo id, so "id@revision" keys never collide.
  return ref.revision ? ref.id + "@" + *ref.revision : ref.id;
}

}  // namespace

std::shared_ptr<const Tokenizer> load_tokenizer(const TokenizerFile& file, std::string id) {
  switch (file.format) {
    case TokenizerFormat::sentencepiece: return load_sentencepiece_tokenizer(file.path, std::move(id));
    case TokenizerFormat::tokenizer_json: return load_tokenizer_json(file.path, std::move(id));
    case TokenizerFormat::tiktoken: return load_tiktoken_tokenizer(file.path, std::move(id));
  }
  throw error(errc::invalid_argument, "load_tokenizer: unknown tokenizer format");
}

std::shared_ptr<const Tokenizer> load_tokenizer(const TokenizerRef& ref, const EnvLookup& env) {
  if (!env) throw error(errc::invalid_argument, "load_tokenizer: the environment lookup is empty");
  return load_tokenizer(ref, env, HubOptions::from_environment(env));
}

class TokenizerCache::Slot {
 public:
  std::mutex mutex;                         // held while loading
  std::shared_ptr<const Tokenizer> loaded;  // set once, by the first load that succeeds
};

TokenizerCache::TokenizerCache()
    : loader_([](const TokenizerRef& ref, const EnvLookup& env, const HubOptions* hub) {
        return hub != nullptr ? load_tokenizer(ref, env, *hub) : load_tokenizer(ref, env);
      }) {}

TokenizerCache::TokenizerCache(Loader loader) {
  if (!loader) throw error(errc::invalid_argument, "TokenizerCache: the loader is empty");
  loader_ = [loader = std::move(loader)](const TokenizerRef& ref, const EnvLookup& env, const HubOptions*) {
    return loader(ref, env);
  };
}

TokenizerCache::~TokenizerCache() = default;

TokenizerCache& TokenizerCache::global() {
  static TokenizerCache cache;
  return cache;
}

std::shared_ptr<const Tokenizer> TokenizerCache::get(const TokenizerRef& ref, const EnvLookup& env) {
  return load_once(ref, env, nullptr);
}

std::shared_ptr<const Tokenizer> TokenizerCache::get(const TokenizerRef& ref, const EnvLookup& env,
                                                     const HubOptions& hub) {
  return load_once(ref, env, &hub);
}

std::shared_ptr<const Tokenizer> TokenizerCache::load_once(const TokenizerRef& ref, const EnvLookup& env,
                                                           const HubOptions* hub) {
  std::shared_ptr<Slot> slot;
  {
    std::lock_guard lock(mutex_);
    auto [it, inserted] = slots_.try_emplace(cache_key(ref), nullptr);
    if (inserted) it->second = std::make_shared<Slot>();
    slot = it->second;
  }
  std::lock_guard lock(slot->mutex);
  if (!slot->loaded) {
    auto tokenizer = loader_(ref, env, hub);
    if (!tokenizer) throw error(errc::invalid_configuration, "the loader returned no tokenizer for \"" + ref.id + "\"");
    slot->loaded = std::move(tokenizer);
  }
  return slot->loaded;
}

std::shared_ptr<const Tokenizer> TokenizerCache::get(std::string_view model_name,
                                                     std::optional<std::string_view> tokenizer_id,
                                                     const EnvLookup& env) {
  return get(resolve_tokenizer_id(model_name, tokenizer_id), env);
}

// Slot mutexes are taken after the map's is released, as in get(): a slow load must not hold up
// callers of other keys waiting for the map.
std::size_t TokenizerCache::size() const {
  std::vector<std::shared_ptr<Slot>> slots;
  {
    std::lock_guard lock(mutex_);
    slots.reserve(slots_.size());
    for (const auto& entry : slots_) slots.push_back(entry.second);
  }
  std::size_t count = 0;
  for (const auto& slot : slots) {
    std::lock_guard slot_lock(slot->mutex);
    if (slot->loaded) ++count;
  }
  return count;
}

std::shared_ptr<const Tokenizer> get_tokenizer_for(std::string_view model_name,
                                                   std::optional<std::string_view> tokenizer_id, const EnvLookup& env) {
  return TokenizerCache::global().get(model_name, tokenizer_id, env);
}

}  // namespace tinker
