// The bundled training corpus of the tiny tokenizer (and training text for tests and samples).
//
// The texts are plain files, corpus/<name>.txt, compiled in at build time by embed_corpus.cmake as
// the functions of corpus_texts.hpp. Every text is in the public domain; the files hold them
// verbatim as transcribed below:
// - declaration_of_independence.txt: the Declaration of Independence (1776), text of the National
//   Archives transcription (signatures omitted). Public domain: published 1776, and a work of the
//   Continental Congress.
// - constitution_articles.txt, constitution_amendments.txt: the Constitution of the United States
//   (1787), Articles I-VII without the signatures, and its twenty-seven amendments (1791-1992), text
//   of the National Archives transcription. Public domain: published 1787-1992, and official texts
//   of the United States government, which 17 U.S.C. 105 excludes from copyright.
// - lincoln_addresses.txt: Abraham Lincoln's Gettysburg Address (the 1864 "Bliss copy") and his
//   Second Inaugural Address (March 4, 1865). Public domain: published in the 1860s.
// - aesop_fables_part_*.txt: fables of Aesop in the translation of George Fyler Townsend, "Three
//   Hundred Aesop's Fables" (London: Routledge, 1867). Public domain: published 1867; Townsend
//   died in 1900. The opening words are capitalized as in the printed book's small capitals.
// - poems.txt: poems published before 1900 (each poem names its author and first
//   publication): Emily Dickinson as printed in "Poems" (1890) and "Poems, Second Series" (1891),
//   William Shakespeare's Sonnets (1609, modern spelling), William Blake, Percy Bysshe Shelley,
//   William Wordsworth, John Keats and Edgar Allan Poe. Public domain: published 1609-1891. Em
//   dashes are written "--", as in plain-text editions.
#include "programs/local/tokenizer/corpus_texts.hpp"
#include "programs/local/tokenizer/tokenizer_store.hpp"

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
      while (!work.empty() && work.front() == '\n') work.remove_prefix(1);  // the files start with a blank line
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
