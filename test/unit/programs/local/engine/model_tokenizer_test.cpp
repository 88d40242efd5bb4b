// The production wiring: an Engine built over the local tokenizers reports each model's tokenizer
// id (byte-level BPE, SentencePiece for tinker-local/tiny-lm-sp), sizes the model by its
// vocabulary and decodes generated tokens for stop strings.
#include "model_engine_test_support.hpp"

namespace tinker::local::test {
namespace {

class ModelTokenizerTest : public ModelEngineFixture {
 protected:
  static void SetUpTestSuite() {
    hub_ = new TempDir();
    tokenizers_.byte_level_bpe = ensure_tiny_tokenizer(hub_->path(), TinyTokenizer::byte_level_bpe);
    tokenizers_.sentencepiece = ensure_tiny_tokenizer(hub_->path(), TinyTokenizer::sentencepiece);
    tokenizer_ = tokenizers_.byte_level_bpe;
  }
  static void TearDownTestSuite() {
    tokenizer_.reset();
    tokenizers_ = {};
    delete hub_;
  }

  SampleResponse greedy(const std::string& sampler, std::int64_t seq, std::optional<StopCondition> stop) {
    SamplingParams params(6, 0.0);
    params.stop = std::move(stop);
    SampleRequest request(sampler, seq, ModelInput::from_ints(tokenizer_->encode("Four score and seven")), params);
    RetrieveOutcome outcome = result(engine->sample(request, alice, false).request_id);
    return from_json<SampleResponse>(outcome.body);
  }

  static TempDir* hub_;
  static LocalTokenizers tokenizers_;
  static std::shared_ptr<const LocalTokenizer> tokenizer_;  // tinker-local/tiny-lm's
};

TempDir* ModelTokenizerTest::hub_ = nullptr;
LocalTokenizers ModelTokenizerTest::tokenizers_;
std::shared_ptr<const LocalTokenizer> ModelTokenizerTest::tokenizer_;

TEST_F(ModelTokenizerTest, GetInfoNamesTheTokenizerAndStopStringsAreDecoded) {
  start(tokenizers_);
  std::string session = new_session(alice);
  std::string model = new_model(session);
  EXPECT_EQ(engine->get_info(GetInfoRequest(model), alice).model_data.tokenizer_id, tokenizer_->id());
  EXPECT_EQ(tokenizer_->id(), tiny_bpe_tokenizer_id);
  std::string sp_model = new_model(session, 1, "tinker-local/tiny-lm-sp");
  EXPECT_EQ(engine->get_info(GetInfoRequest(sp_model), alice).model_data.tokenizer_id, tiny_sp_tokenizer_id);

  // Token ids up to the vocabulary size are valid model input; the next one is not.
  ForwardBackwardInput batch = cross_entropy_batch(1, 3);
  batch.data[0].model_input = ModelInput::from_ints(std::vector<TokenId>{0, 1, tokenizer_->vocab_size() - 1});
  EXPECT_EQ(result(forward_backward(model, 1, true, batch).request_id).content_type, "application/json");
  batch.data[0].model_input = ModelInput::from_ints(std::vector<TokenId>{0, 1, tokenizer_->vocab_size()});
  EXPECT_EQ(text(result_json(forward_backward(model, 2, true, batch).request_id)["category"]), "user");

  std::string sampler =
      engine
          ->create_sampling_session(
              CreateSamplingSessionRequest(session, 0, std::string("tinker-local/tiny-lm"), std::nullopt), alice)
          .sampling_session_id;
  SampleResponse free_run = greedy(sampler, 0, std::nullopt);
  ASSERT_EQ(free_run.sequences[0].tokens.size(), 6u);
  EXPECT_EQ(free_run.sequences[0].stop_reason, StopReason::length);
  TokenId first = free_run.sequences[0].tokens[0];

  SampleResponse by_token = greedy(sampler, 1, StopCondition(std::vector<TokenId>{first}));
  EXPECT_EQ(by_token.sequences[0].tokens, std::vector<TokenId>{first});
  EXPECT_EQ(by_token.sequences[0].stop_reason, StopReason::stop);

  std::vector<TokenId> one{first};
  std::string first_text = tokenizer_->decode(one);
  ASSERT_FALSE(first_text.empty());
  SampleResponse by_string = greedy(sampler, 2, StopCondition(first_text));
  EXPECT_EQ(by_string.sequences[0].stop_reason, StopReason::stop);
  EXPECT_EQ(by_string.sequences[0].tokens, std::vector<TokenId>{first});
}

}  // namespace
}  // namespace tinker::local::test
