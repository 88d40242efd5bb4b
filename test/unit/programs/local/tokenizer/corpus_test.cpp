// The corpus compiled into tinker-local is generated at build time from the text files
// src/programs/local/tokenizer/corpus/<name>.txt (embed_corpus.cmake): each function of
// corpus_texts.hpp returns its file's bytes exactly, and every text file is compiled in.
#include "programs/local/tokenizer/corpus_texts.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace tinker::local::corpus {
namespace {

namespace fs = std::filesystem;

// The corpus folder of the source tree. The build may name it (a compile definition); otherwise it
// is found from this file's own path, test/unit/programs/local/tokenizer/ in the same tree.
fs::path corpus_source_dir() {
#ifdef TINKER_LOCAL_CORPUS_DIR
  return fs::path(TINKER_LOCAL_CORPUS_DIR);
#else
  const fs::path tree_root = fs::path(__FILE__).parent_path() / ".." / ".." / ".." / ".." / "..";
  return (tree_root / "src" / "programs" / "local" / "tokenizer" / "corpus").lexically_normal();
#endif
}

class CorpusText {
 public:
  CorpusText(std::string name_, std::string_view embedded_) : name(std::move(name_)), embedded(embedded_) {}

  std::string name;  ///< the function, and the file name without ".txt"
  std::string_view embedded;
};

std::vector<CorpusText> embedded_texts() {
  std::vector<CorpusText> texts;
  texts.emplace_back("declaration_of_independence", declaration_of_independence());
  texts.emplace_back("constitution_articles", constitution_articles());
  texts.emplace_back("constitution_amendments", constitution_amendments());
  texts.emplace_back("lincoln_addresses", lincoln_addresses());
  texts.emplace_back("aesop_fables_part_one", aesop_fables_part_one());
  texts.emplace_back("aesop_fables_part_two", aesop_fables_part_two());
  texts.emplace_back("poems", poems());
  return texts;
}

std::string file_bytes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Equal bytes; otherwise the sizes and the first differing offset (not two 20 kB texts).
::testing::AssertionResult same_bytes(std::string_view on_disk, std::string_view embedded) {
  if (on_disk == embedded) return ::testing::AssertionSuccess();
  const auto [disk_end, embedded_end] = std::mismatch(on_disk.begin(), on_disk.end(), embedded.begin(), embedded.end());
  return ::testing::AssertionFailure() << "the file has " << on_disk.size() << " bytes, the embedded text "
                                       << embedded.size() << "; they differ from byte "
                                       << std::distance(on_disk.begin(), disk_end);
}

TEST(CorpusTest, EachEmbeddedTextIsItsFileByteForByte) {
  const fs::path dir = corpus_source_dir();
  ASSERT_TRUE(fs::is_directory(dir)) << dir;
  for (const CorpusText& text : embedded_texts()) {
    const fs::path file = dir / (text.name + ".txt");
    ASSERT_TRUE(fs::is_regular_file(file)) << file;
    EXPECT_FALSE(text.embedded.empty()) << text.name;
    EXPECT_TRUE(same_bytes(file_bytes(file), text.embedded)) << file;
  }
}

TEST(CorpusTest, EveryTextFileIsEmbedded) {
  std::set<std::string> files;
  for (const fs::directory_entry& entry : fs::directory_iterator(corpus_source_dir())) {
    if (entry.path().extension() == ".txt") files.insert(entry.path().stem().string());
  }
  std::set<std::string> embedded;
  for (const CorpusText& text : embedded_texts()) embedded.insert(text.name);
  EXPECT_EQ(files, embedded);
}

}  // namespace
}  // namespace tinker::local::corpus
