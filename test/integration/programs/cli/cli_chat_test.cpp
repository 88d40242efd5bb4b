// `tinker sample` and `tinker chat` in-process against tinker-local: what they send is the
// renderer's prompt (the same seed through the SDK gives the same tokens), what they print is the
// parse of what came back, and a chat read from a pipe keeps its history, system prompt and
// commands. The terminal form runs in tmux (cli_chat_terminal_test.cpp).
#include "image/image_file.hpp"
#include "integration/programs/cli/cli_support.hpp"
#include "programs/cli/replies.hpp"
#include "support/temp_files.hpp"

#include <tinker/renderers.hpp>
#include <tinker/tokenizer.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json/serialize.hpp>

#include <map>
#include <sstream>

namespace tinker::test {
namespace {

using renderers::Message;
using ::testing::HasSubstr;
using ::testing::Not;

// tinker-local's vision model (its recommended renderer is qwen3_5).
const std::string vision_model = "tinker-local/tiny-vl";

std::vector<std::uint8_t> gradient_png(std::uint32_t width, std::uint32_t height) {
  image::RgbImage image;
  image.width = width;
  image.height = height;
  for (std::uint32_t y = 0; y < height; ++y) {
    for (std::uint32_t x = 0; x < width; ++x) {
      image.rgb.insert(image.rgb.end(), {static_cast<std::uint8_t>(x * 4), static_cast<std::uint8_t>(y * 5), 128});
    }
  }
  return image::encode_png(image);
}

class CliChat : public CliTest {
 protected:
  // What the SDK samples from `source` for `prompt`, with the CLI's default parameters but
  // `max_tokens` and `seed`, stopping at `stop`.
  std::vector<SampledSequence> sdk_samples(const SamplingSource& source, const ModelInput& prompt,
                                           std::optional<StopCondition> stop, std::int64_t num_samples = 1) {
    SamplingParams params(max_tokens, 1.0);
    params.seed = seed;
    params.stop = std::move(stop);
    sync::SamplingClient sampler = service().create_sampling_client(source);
    return sampler.sample(prompt, num_samples, params).get().sequences;
  }

  // The recommended renderer of `model` over its tokenizer.
  const renderers::Renderer& renderer(const std::string& model = std::string(tiny_model)) {
    std::unique_ptr<renderers::Renderer>& made = renderers_[model];
    if (!made) {
      sync::SamplingClient sampler = service().create_sampling_client(SamplingSource::from_base_model(model));
      made = renderers::make_renderer(renderers::recommended_renderer(model), sampler.get_tokenizer());
    }
    return *made;
  }

  // The next reply of `model` to `messages` as the SDK samples and the renderer parses it.
  std::pair<renderers::ParsedResponse, SampledSequence> sdk_reply(const std::vector<Message>& messages,
                                                                  const std::string& model = std::string(tiny_model)) {
    const ModelInput prompt = renderer(model).build_generation_prompt(messages);
    const SampledSequence sequence =
        sdk_samples(SamplingSource::from_base_model(model), prompt, renderer(model).stop_sequences()).front();
    return {renderer(model).parse_response(sequence.tokens), sequence};
  }

  static std::string plain(const renderers::ParsedResponse& reply, StopReason stop_reason) {
    std::ostringstream out;
    cli::print_reply(out, reply, stop_reason, cli::ReplyStyle::plain);
    return out.str();
  }

  // `tinker <command> --model <model>` with this test's length and seed, then `args`.
  std::vector<std::string> command(const std::string& name, std::vector<std::string> args,
                                   const std::string& model = std::string(tiny_model)) const {
    std::vector<std::string> all{name,     "--model",           model, "--max-tokens", std::to_string(max_tokens),
                                 "--seed", std::to_string(seed)};
    all.insert(all.end(), args.begin(), args.end());
    return all;
  }

  std::int64_t max_tokens = 12;
  std::uint64_t seed = 5;

 private:
  std::map<std::string, std::unique_ptr<renderers::Renderer>> renderers_;
};

std::vector<TokenId> json_tokens(const boost::json::value& array) {
  std::vector<TokenId> tokens;
  for (const auto& id : array.as_array()) tokens.push_back(static_cast<TokenId>(id.as_int64()));
  return tokens;
}

TEST_F(CliChat, SampleSendsThePromptAsOneUserMessageAndPrintsEachParsedReply) {
  const std::string prompt = "Tell me about the Constitution.";
  const ModelInput rendered = renderer().build_generation_prompt(std::vector<Message>{Message("user", prompt)});
  const std::vector<SampledSequence> expected =
      sdk_samples(SamplingSource::from_base_model(std::string(tiny_model)), rendered, renderer().stop_sequences(), 2);

  const CliResult json = cli(command("sample", {"-n", "2", "-f", "json", prompt}));
  ASSERT_EQ(json.code, cli::exit_ok) << json.err;
  const boost::json::value output = json.json();
  const boost::json::array& samples = output.as_object().at("samples").as_array();
  ASSERT_EQ(samples.size(), 2u);
  std::string expected_table;
  for (std::size_t i = 0; i < 2; ++i) {
    const renderers::ParsedResponse reply = renderer().parse_response(expected[i].tokens);
    boost::json::object expected_json = cli::reply_json(reply, expected[i].stop_reason);
    EXPECT_EQ(json_tokens(samples[i].as_object().at("tokens")), expected[i].tokens) << i;
    boost::json::object shown = samples[i].as_object();
    shown.erase("tokens");
    EXPECT_EQ(shown, expected_json) << i;
    expected_table += "--- sample " + std::to_string(i + 1) + " of 2 ---\n" + plain(reply, expected[i].stop_reason);
  }

  const CliResult table = cli(command("sample", {"-n", "2", prompt}));
  ASSERT_EQ(table.code, cli::exit_ok) << table.err;
  EXPECT_EQ(table.out, expected_table);
}

TEST_F(CliChat, SampleRawSendsTheTextsTokensAlone) {
  const std::string prompt = "We the People of the United States";
  const ModelInput tokens = ModelInput::from_ints(renderer().tokenizer().encode(prompt, true));
  const SampledSequence expected =
      sdk_samples(SamplingSource::from_base_model(std::string(tiny_model)), tokens, std::nullopt).front();

  const CliResult result = cli(command("sample", {"--raw", "-f", "json", prompt}));
  ASSERT_EQ(result.code, cli::exit_ok) << result.err;
  const boost::json::object sample = result.json().as_object().at("samples").as_array().at(0).as_object();
  EXPECT_EQ(json_tokens(sample.at("tokens")), expected.tokens);
  EXPECT_EQ(std::string(sample.at("text").as_string()), renderer().tokenizer().decode(expected.tokens, false));
  EXPECT_EQ(sample.at("stop_reason"), to_string(expected.stop_reason));

  const CliResult table = cli(command("sample", {"--raw", prompt}));
  ASSERT_EQ(table.code, cli::exit_ok) << table.err;
  EXPECT_EQ(table.out, renderer().tokenizer().decode(expected.tokens, false) + "\n");
}

TEST_F(CliChat, SampleReadsThePromptFromStandardInputAndSamplesACheckpoint) {
  const RunWithCheckpoints run = make_run({});
  const std::string prompt = "Hello";
  const ModelInput rendered = renderer().build_generation_prompt(std::vector<Message>{Message("user", prompt)});
  const SampledSequence expected =
      sdk_samples(SamplingSource::from_model_path(run.sampler_path), rendered, renderer().stop_sequences()).front();

  const CliResult result = cli({"sample", "--checkpoint", run.sampler_path, "--max-tokens", std::to_string(max_tokens),
                                "--seed", std::to_string(seed), "-f", "json", "-"},
                               prompt);
  ASSERT_EQ(result.code, cli::exit_ok) << result.err;
  EXPECT_EQ(json_tokens(result.json().as_object().at("samples").as_array().at(0).as_object().at("tokens")),
            expected.tokens);
}

TEST_F(CliChat, ChatJsonAnswersTheConversationOnStandardInput) {
  const std::string conversation = R"({"messages": [
    {"role": "system", "content": "You answer in one word."},
    {"role": "user", "content": "Capital of France?"},
    {"role": "assistant", "content": "Paris."},
    {"role": "user", "content": "And of Italy?"}
  ]})";
  const auto [reply, sequence] = sdk_reply(renderers::conversation_from_json(conversation));

  const CliResult result = cli(command("chat", {"--json"}), conversation);
  ASSERT_EQ(result.code, cli::exit_ok) << result.err;
  EXPECT_EQ(result.json().as_object(), cli::reply_json(reply, sequence.stop_reason));
  EXPECT_EQ(result.err, "") << "no note: the service comes from the environment";

  const CliResult as_format = cli(command("chat", {"-f", "json"}), conversation);
  ASSERT_EQ(as_format.code, cli::exit_ok) << as_format.err;
  EXPECT_EQ(as_format.out, result.out) << "-f json is the same form";
}

TEST_F(CliChat, ToolsAreDeclaredInTheModelsFormatBeforeTheConversation) {
  const std::string tools = R"([{"name": "get_weather", "description": "The weather in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}])";
  const std::string messages = R"([{"role": "system", "content": "You help travellers."},
    {"role": "user", "content": "Weather in Paris?"}])";
  std::vector<Message> expected_messages =
      renderer().create_conversation_prefix_with_tools(renderers::tools_from_json(tools), "You help travellers.");
  expected_messages.emplace_back("user", "Weather in Paris?");
  const auto [reply, sequence] = sdk_reply(expected_messages);
  const std::string expected = boost::json::serialize(cli::reply_json(reply, sequence.stop_reason));

  const CliResult in_document =
      cli(command("chat", {"--json"}), R"({"messages": )" + messages + R"(, "tools": )" + tools + "}");
  ASSERT_EQ(in_document.code, cli::exit_ok) << in_document.err;
  EXPECT_EQ(boost::json::serialize(in_document.json()), expected);

  const TempFile tools_file(tools, ".json");
  const CliResult from_file =
      cli(command("chat", {"--json", "--tools", tools_file.path().string()}), R"({"messages": )" + messages + "}");
  ASSERT_EQ(from_file.code, cli::exit_ok) << from_file.err;
  EXPECT_EQ(boost::json::serialize(from_file.json()), expected);

  const CliResult bad_file = cli(command("chat", {"--json", "--tools", "/no/such/tools.json"}), messages);
  EXPECT_EQ(bad_file.code, cli::exit_failure);
  EXPECT_THAT(bad_file.err, HasSubstr("--tools /no/such/tools.json: cannot open the file"));
}

TEST_F(CliChat, ChatJsonRefusesAConversationNamingWhatIsWrong) {
  const CliResult missing_role =
      cli(command("chat", {"--json"}), R"({"messages": [{"role": "user", "content": "hi"}, {"content": "x"}]})");
  EXPECT_EQ(missing_role.code, cli::exit_failure);
  EXPECT_THAT(missing_role.err, HasSubstr("messages[1].role: required"));

  const CliResult unknown_role = cli(command("chat", {"--json"}), R"([{"role": "robot", "content": "beep"}])");
  EXPECT_EQ(unknown_role.code, cli::exit_failure);
  EXPECT_THAT(unknown_role.err, HasSubstr("messages[0].role: unknown role \"robot\""));

  const CliResult not_json = cli(command("chat", {"--json"}), "Hello?");
  EXPECT_EQ(not_json.code, cli::exit_failure);
  EXPECT_THAT(not_json.err, HasSubstr("standard input: "));
}

TEST_F(CliChat, ChatFromAPipeKeepsHistoryAndSystemPromptAndObeysCommands) {
  const std::string input =
      "/system Be terse.\n"
      "Hello\\\n"
      "there\n"
      "/image /no/such/picture.png\n"
      "And then?\n"
      "/reset\n"
      "/sing\n"
      "Again\n"
      "/exit\n"
      "never sent\n";
  const Message system("system", "Be terse.");
  const Message first("user", "Hello\nthere");
  const auto [reply1, sequence1] = sdk_reply({system, first});
  const auto [reply2, sequence2] = sdk_reply({system, first, reply1.message, Message("user", "And then?")});
  const auto [reply3, sequence3] = sdk_reply({system, Message("user", "Again")});

  const CliResult result = cli(command("chat", {}), input);
  ASSERT_EQ(result.code, cli::exit_ok) << result.err;
  EXPECT_EQ(result.out, plain(reply1, sequence1.stop_reason) + plain(reply2, sequence2.stop_reason) +
                            plain(reply3, sequence3.stop_reason));
  EXPECT_THAT(result.err, HasSubstr("(system prompt set)"));
  EXPECT_THAT(result.err, HasSubstr("/no/such/picture.png"));
  EXPECT_THAT(result.err, HasSubstr("(conversation cleared; the system prompt stays)"));
  EXPECT_THAT(result.err, HasSubstr("Error: unknown command /sing"));
  EXPECT_THAT(result.err, Not(HasSubstr("Chatting with"))) << "no banner without a terminal";
}

TEST_F(CliChat, AnAttachedImageGoesWithTheNextMessageToAVisionModel) {
  const std::vector<std::uint8_t> png = gradient_png(64, 48);
  const TempFile picture(std::string(png.begin(), png.end()), ".png");
  const std::string input = "/image " + picture.path().string() + "\nWhat colour is it?\nAnd now?\n";
  const Message with_image("user",
                           std::vector<renderers::ContentPart>{renderers::ImagePart::from_file(picture.path().string()),
                                                               renderers::TextPart("What colour is it?")});
  const auto [reply1, sequence1] = sdk_reply({with_image}, vision_model);
  const auto [reply2, sequence2] = sdk_reply({with_image, reply1.message, Message("user", "And now?")}, vision_model);

  const CliResult result = cli(command("chat", {}, vision_model), input);
  ASSERT_EQ(result.code, cli::exit_ok) << result.err;
  EXPECT_THAT(result.err, HasSubstr("attached to your next message"));
  EXPECT_EQ(result.out, plain(reply1, sequence1.stop_reason) + plain(reply2, sequence2.stop_reason));
}

TEST_F(CliChat, AnImageForATextOnlyModelIsRefusedAndTheChatGoesOn) {
  const std::vector<std::uint8_t> png = gradient_png(32, 32);
  const TempFile picture(std::string(png.begin(), png.end()), ".png");
  const auto [reply, sequence] = sdk_reply({Message("user", "Then without.")});
  const CliResult result =
      cli(command("chat", {}), "/image " + picture.path().string() + "\nWhat is this?\nThen without.\n");
  ASSERT_EQ(result.code, cli::exit_ok) << result.err;
  EXPECT_THAT(result.err, HasSubstr("messages[0].content[0]"));
  EXPECT_THAT(result.err, HasSubstr("(the message was not sent)"));
  EXPECT_EQ(result.out, plain(reply, sequence.stop_reason)) << "the refused message is not in the history";
}

TEST_F(CliChat, ChatEndsAtTheEndOfInput) {
  const auto [reply, sequence] = sdk_reply({Message("user", "Hi")});
  const CliResult result = cli(command("chat", {}), "Hi");
  ASSERT_EQ(result.code, cli::exit_ok) << result.err;
  EXPECT_EQ(result.out, plain(reply, sequence.stop_reason));
}

TEST_F(CliChat, LocalStartsATinkerLocalInProcessEvenWithAKey) {
  const auto requests_before = server->audit().requests.size();
  const CliResult result = cli(command("sample", {"--local", "-f", "json", "Hi"}));
  ASSERT_EQ(result.code, cli::exit_ok) << result.err;
  EXPECT_THAT(result.err, HasSubstr("sampling from a tinker-local started in this process (models: "));
  EXPECT_EQ(result.json().as_object().at("samples").as_array().size(), 1u);
  EXPECT_EQ(server->audit().requests.size(), requests_before) << "nothing reached the test's server";
}

TEST_F(CliChat, AModelTheServerDoesNotServeIsAFailedCommand) {
  const CliResult result = cli({"sample", "--model", "nobody/no-such-model", "Hi"});
  EXPECT_EQ(result.code, cli::exit_failure);
  EXPECT_THAT(result.err, HasSubstr("nobody/no-such-model"));
}

}  // namespace
}  // namespace tinker::test
