#include "unit/text/hf/hf_test_support.hpp"

#include <tinker/error.hpp>

#include <fstream>

namespace tinker::test::hf {

std::filesystem::path TempTokenizerDir::write(const std::string& name, const std::string& content) const {
  const auto file = path() / name;
  std::ofstream out(file, std::ios::binary);
  out << content;
  return file;
}

boost::json::object bpe_tokenizer_json(const std::vector<std::string>& vocab,
                                       const std::vector<std::pair<std::string, std::string>>& merges,
                                       bool pair_merges) {
  boost::json::object vocab_json;
  for (std::size_t i = 0; i < vocab.size(); ++i) vocab_json[vocab[i]] = static_cast<std::int64_t>(i);
  boost::json::array merges_json;
  for (const auto& [left, right] : merges) {
    if (pair_merges) {
      merges_json.push_back(boost::json::array{boost::json::string(left), boost::json::string(right)});
    } else {
      merges_json.push_back(boost::json::string(left + " " + right));
    }
  }
  boost::json::object model{
      {"type", "BPE"}, {"dropout", nullptr}, {"unk_token", nullptr}, {"vocab", vocab_json}, {"merges", merges_json}};
  return boost::json::object{{"version", "1.0"},
                             {"truncation", nullptr},
                             {"padding", nullptr},
                             {"added_tokens", boost::json::array{}},
                             {"normalizer", nullptr},
                             {"pre_tokenizer", nullptr},
                             {"post_processor", nullptr},
                             {"decoder", nullptr},
                             {"model", model}};
}

void expect_matches_reference(const Tokenizer& tokenizer, const std::filesystem::path& tokenizer_json,
                              const std::vector<std::string>& cases) {
  const auto reference = run_hf_reference(tokenizer_json, cases);
  ASSERT_EQ(reference.size(), cases.size());
  int reported = 0;
  const auto show = [](const std::vector<TokenId>& ids) {
    std::string text;
    for (const auto id : ids) text += std::to_string(id) + " ";
    return text;
  };
  for (std::size_t i = 0; i < cases.size() && reported < 8; ++i) {
    const auto ids = tokenizer.encode(cases[i], false);
    const auto ids_special = tokenizer.encode(cases[i], true);
    const auto decoded = tokenizer.decode(reference[i].ids_special, false);
    const auto decoded_skip = tokenizer.decode(reference[i].ids_special, true);
    if (ids != reference[i].ids || ids_special != reference[i].ids_special || decoded != reference[i].decoded ||
        decoded_skip != reference[i].decoded_skip) {
      ++reported;
      ADD_FAILURE() << "case \"" << cases[i] << "\"\n ids:          " << show(ids)
                    << "\n reference:    " << show(reference[i].ids) << "\n ids_special:  " << show(ids_special)
                    << "\n reference:    " << show(reference[i].ids_special) << "\n decoded:      \"" << decoded
                    << "\"\n reference:    \"" << reference[i].decoded << "\"\n decoded_skip: \"" << decoded_skip
                    << "\"\n reference:    \"" << reference[i].decoded_skip << "\"";
    }
  }
}

std::string load_error(const std::string& text) {
  TempTokenizerDir dir;
  const auto file = dir.write("tokenizer.json", text);
  try {
    load_tokenizer_json(file, "bad");
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::invalid_configuration) << e.what();
    const std::string message = e.what();
    EXPECT_NE(message.find(file.string()), std::string::npos) << message;
    return message;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not a tinker::error: " << e.what();
    return e.what();
  }
  ADD_FAILURE() << "loaded: " << text.substr(0, 200);
  return {};
}

}  // namespace tinker::test::hf
