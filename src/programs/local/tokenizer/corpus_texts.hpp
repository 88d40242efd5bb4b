// The public-domain texts bundled with tinker-local (see corpus.cpp for the sources). Each
// function returns one or more whole works: a title line, then paragraphs (prose: one per line;
// verse: one line per verse, stanzas separated by blank lines) separated by blank lines.
//
// The definitions are generated at build time (embed_corpus.cmake): `<name>()` returns the bytes of
// the text file corpus/<name>.txt exactly, so a text is edited there and a new file needs its
// function declared here.
#pragma once

#include <string_view>

namespace tinker::local::corpus {

std::string_view declaration_of_independence();
std::string_view constitution_articles();
std::string_view constitution_amendments();
std::string_view lincoln_addresses();
std::string_view aesop_fables_part_one();
std::string_view aesop_fables_part_two();
std::string_view poems();

}  // namespace tinker::local::corpus
