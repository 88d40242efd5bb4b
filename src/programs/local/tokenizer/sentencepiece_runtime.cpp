// A guard against a broken process image: libsentencepiece.so (Debian's 0.1.97) carries and
// exports its own protobuf-lite 3.14. If another protobuf runtime (a shared libprotobuf, or one
// an executable exports) comes first in the dynamic linker's lookup order, sentencepiece's own
// calls bind to it: training or loading a model then aborts on a protobuf version CHECK, or
// deadlocks inside protobuf. The build keeps protobuf out of our executables' dynamic symbol
// tables (cmake/TinkerDependencies.cmake); this check turns a violation of that into a clear
// error instead of a crash.
#include "programs/local/tokenizer/tokenizer_training.hpp"

#include <tinker/error.hpp>

#include <dlfcn.h>

namespace tinker::local::detail {
namespace {

constexpr const char* sentencepiece_symbol = "_ZN13sentencepiece22SetRandomGeneratorSeedEj";
constexpr const char* protobuf_symbol = "_ZN6google8protobuf8internal13VerifyVersionEiiPKc";  // VerifyVersion

// Empty if sentencepiece's protobuf calls reach its own runtime (or it has none of its own).
std::string find_protobuf_conflict() {
  Dl_info sentencepiece{};
  void* const anchor = ::dlsym(RTLD_DEFAULT, sentencepiece_symbol);
  if (anchor == nullptr || ::dladdr(anchor, &sentencepiece) == 0 || sentencepiece.dli_fname == nullptr) return {};
  void* const library = ::dlopen(sentencepiece.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  if (library == nullptr) return {};
  void* const own = ::dlsym(library, protobuf_symbol);  // searches the library first, then its dependencies
  ::dlclose(library);
  Dl_info own_info{};
  if (own == nullptr || ::dladdr(own, &own_info) == 0 || own_info.dli_fbase != sentencepiece.dli_fbase) {
    return {};  // sentencepiece uses a shared protobuf runtime rather than a bundled one
  }
  void* const bound = ::dlsym(RTLD_DEFAULT, protobuf_symbol);
  if (bound == own) return {};
  Dl_info bound_info{};
  const char* other = (bound != nullptr && ::dladdr(bound, &bound_info) != 0 && bound_info.dli_fname != nullptr)
                          ? bound_info.dli_fname
                          : "another object";
  return std::string("SentencePiece cannot run in this process: ") + sentencepiece.dli_fname +
         " bundles its own protobuf runtime, but its protobuf calls bind to " + other +
         " (link protobuf statically and keep its symbols out of the executable's dynamic symbol table, and do "
         "not preload libprotobuf)";
}

}  // namespace

void require_usable_sentencepiece() {
  static const std::string conflict = find_protobuf_conflict();
  if (!conflict.empty()) throw tinker::error(errc::invalid_configuration, conflict);
}

}  // namespace tinker::local::detail
