// The bundled training corpus of the tiny tokenizer (and training text for tests and samples).
//
// Every text is in the public domain; the files hold them verbatim as transcribed below:
// - corpus_declaration.cpp: the Declaration of Independence (1776), text of the National
//   Archives transcription (signatures omitted). Public domain: published 1776, and a work of the
//   Continental Congress.
// - corpus_constitution.cpp, corpus_amendments.cpp: the Constitution of the United States (1787)
//   and its twenty-seven amendments, text of the National Archives transcription. Public domain:
//   published 1787-1992, and official texts of the United States government, which 17 U.S.C. 105
//   excludes from copyright.
// - corpus_lincoln.cpp: Abraham Lincoln's Gettysburg Address (the 1864 "Bliss copy") and his
//   Second Inaugural Address (1865). Public domain: published in the 1860s.
// - corpus_fables*.cpp: fables of Aesop in the translation of George Fyler Townsend, "Three
//   Hundred Aesop's Fables" (London: Routledge, 1867). Public domain: published 1867; Townsend
//   died in 1900.
// - corpus_poems.cpp: poems published before 1900 (each poem names its author and first
//   publication): Emily Dickinson as printed in "Poems" (1890) and "Poems, Second Series" (1891),
//   William Shakespeare's Sonnets (1609, modern spelling), William Blake, Percy Bysshe Shelley,
//   William Wordsworth, John Keats and Edgar Allan Poe. Public domain: published 1609-1891.
#include "local/tokenizer/corpus_texts.hpp"
#include "local/tokenizer/tokenizer_store.hpp"

#include <string>

namespace tinker::local {

std::string_view bundled_corpus() {
  static const std::string text = [] {
    const std::string_view works[] = {
        corpus::declaration_of_independence(),
        corpus::constitution_articles(),
        corpus::constitution_amendments(),
        corpus::lincoln_addresses(),
        corpus::aesop_fables_part_one(),
        corpus::aesop_fables_part_two(),
        corpus::poems(),
    };
    std::string joined;
    for (std::string_view work : works) {
      while (!work.empty() && work.front() == '\n') work.remove_prefix(1);  // raw literals start on a new line
      while (!work.empty() && work.back() == '\n') work.remove_suffix(1);
      if (!joined.empty()) joined += "\n\n";
      joined += work;
    }
    joined += '\n';
    return joined;
  }();
  return text;
}

}  // namespace tinker::local
