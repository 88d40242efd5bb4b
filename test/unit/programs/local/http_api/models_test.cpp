// doc/local.md#ordering-and-futures: create_model (future, id scheme), get_info (tokenizer id in
// the Hugging Face cache layout), unload_model.
#include "unit/programs/local/support/expectations.hpp"
#include "unit/programs/local/support/local_server.hpp"

#include <boost/json/parse.hpp>

#include <filesystem>
#include <fstream>

namespace tinker::local::test {
namespace {

namespace json = boost::json;
namespace fs = std::filesystem;

using HttpApiModels = LocalServerTest;

json::object create_model_body(const std::string& session, std::int64_t seq, std::string_view base_model, int rank) {
  json::object body = json::parse(R"({"lora_config": {"train_unembed": true, "train_mlp": true, "train_attn": false},
                                      "user_metadata": {"purpose": "test"}, "type": "create_model"})")
                          .as_object();
  body["session_id"] = session;
  body["model_seq_id"] = seq;
  body["base_model"] = base_model;
  body["lora_config"].as_object()["rank"] = rank;
  return body;
}

TEST_F(HttpApiModels, CreateModelAnswersATicketThenTheModelId) {
  const std::string session = api().create_session();
  const RawResponse ticket = api().post("/api/v1/create_model", create_model_body(session, 0, tiny_model, 8));
  ASSERT_EQ(ticket.status, 200) << ticket.describe();
  ASSERT_TRUE(is_json_answer(ticket));
  const std::string request_id = string_field(ticket.json(), "request_id");
  EXPECT_FALSE(request_id.empty());
  const json::value ticket_body = ticket.json();
  const json::value* model_id = ticket_body.as_object().if_contains("model_id");
  if (model_id != nullptr) {
    EXPECT_EQ(model_id->as_string(), session + ":train:0");
  }

  const RawResponse result = api().await_response(request_id);
  ASSERT_EQ(result.status, 200) << result.describe();
  ASSERT_TRUE(is_json_answer(result));
  const json::value expected = {{"type", "create_model"}, {"model_id", session + ":train:0"}};
  EXPECT_EQ(result.json(), expected);

  EXPECT_EQ(api().create_model(session, 1), session + ":train:1");
}

TEST_F(HttpApiModels, RepeatedModelSeqIdReturnsTheSameTicket) {
  const std::string session = api().create_session();
  const json::object body = create_model_body(session, 0, tiny_model, 4);
  const std::string first = api().submit("/api/v1/create_model", body);
  const std::string second = api().submit("/api/v1/create_model", body);
  EXPECT_EQ(first, second);
  EXPECT_NO_THROW(api().await_json(first));
}

TEST_F(HttpApiModels, UnknownBaseModelFailsTheFutureWithCategoryUser) {
  const std::string session = api().create_session();
  const RawResponse ticket = api().post("/api/v1/create_model", create_model_body(session, 0, "acme/unknown", 4));
  if (ticket.status != 200) {
    // Refusing at submission is also faithful enough, if the detail names the model.
    EXPECT_TRUE(is_client_error(ticket, "acme/unknown"));
    return;
  }
  const json::value failure = api().await_failure(string_field(ticket.json(), "request_id"));
  EXPECT_EQ(string_field(failure, "category"), "user");
  EXPECT_NE(string_field(failure, "error").find("acme/unknown"), std::string::npos) << to_text(failure);
}

TEST_F(HttpApiModels, GetInfoReportsTheModelAndItsTokenizer) {
  const std::string session = api().create_session();
  ASSERT_NO_THROW(api().call("/api/v1/create_model", create_model_body(session, 0, "Qwen/Qwen3-8B", 8)));
  const std::string model = session + ":train:0";
  const RawResponse response = api().post("/api/v1/get_info", json::object{{"model_id", model}, {"type", "get_info"}});
  ASSERT_EQ(response.status, 200) << response.describe();
  ASSERT_TRUE(is_json_answer(response));
  const json::value info = response.json();
  EXPECT_EQ(string_field(info, "model_id"), model);
  EXPECT_EQ(string_field(info, "type"), "get_info");
  EXPECT_EQ(field(info, "is_lora"), json::value(true));
  EXPECT_EQ(field(info, "lora_rank").to_number<std::int64_t>(), 8);
  EXPECT_EQ(string_field(info, "model_name"), "Qwen/Qwen3-8B");
  const json::value& data = field(info, "model_data");
  EXPECT_EQ(string_field(data, "model_name"), "Qwen/Qwen3-8B");  // what get_tokenizer() reads
  const std::string tokenizer_id = string_field(data, "tokenizer_id");
  EXPECT_EQ(tokenizer_id, api().server().tokenizer_id("Qwen/Qwen3-8B"));
  EXPECT_EQ(tokenizer_id, "tinker-local/tiny-bpe-1k");

  // The tokenizer is installed in the Hugging Face cache layout under that id.
  const fs::path repo = shared_hf_hub_cache() / "models--tinker-local--tiny-bpe-1k";
  std::ifstream ref(repo / "refs" / "main");
  std::string revision;
  ASSERT_TRUE(std::getline(ref, revision)) << "no refs/main under " << repo;
  EXPECT_TRUE(fs::is_regular_file(repo / "snapshots" / revision / "tokenizer.json"));
  EXPECT_TRUE(
      fs::equivalent(api().server().tokenizer_file("Qwen/Qwen3-8B"), repo / "snapshots" / revision / "tokenizer.json"));
}

TEST_F(HttpApiModels, TheSentencePieceModelReportsTheSentencePieceTokenizer) {
  const std::string session = api().create_session();
  const std::string model = api().create_model(session, 0, 4, "tinker-local/tiny-lm-sp");
  const RawResponse response = api().post("/api/v1/get_info", json::object{{"model_id", model}, {"type", "get_info"}});
  ASSERT_EQ(response.status, 200) << response.describe();
  EXPECT_EQ(string_field(field(response.json(), "model_data"), "tokenizer_id"), "tinker-local/tiny-sp-1k");
  EXPECT_EQ(api().server().tokenizer_id("tinker-local/tiny-lm-sp"), "tinker-local/tiny-sp-1k");
  EXPECT_EQ(api().server().tokenizer_file("tinker-local/tiny-lm-sp").filename(), "tokenizer.model");
  // Each tinker-local/ model's name is an alias repo holding its tokenizer (SamplingClient lookups).
  for (const auto& [alias, file] : {std::pair<std::string, std::string>("tiny-lm", "tokenizer.json"),
                                    std::pair<std::string, std::string>("tiny-lm-sp", "tokenizer.model")}) {
    const fs::path repo = shared_hf_hub_cache() / ("models--tinker-local--" + alias);
    std::ifstream ref(repo / "refs" / "main");
    std::string revision;
    ASSERT_TRUE(std::getline(ref, revision)) << "no refs/main under " << repo;
    EXPECT_TRUE(fs::is_regular_file(repo / "snapshots" / revision / file)) << repo;
  }
}

TEST_F(HttpApiModels, UnloadModelThenItsOperationsFail) {
  const std::string session = api().create_session();
  const std::string model = api().create_model(session);
  const json::value unloaded =
      api().call("/api/v1/unload_model", json::object{{"model_id", model}, {"type", "unload_model"}});
  EXPECT_EQ(string_field(unloaded, "model_id"), model);
  const json::value* type = unloaded.as_object().if_contains("type");
  if (type != nullptr) {
    EXPECT_EQ(type->as_string(), "unload_model");
  }

  json::array data;
  data.emplace_back(cross_entropy_datum({5, 6, 7}));
  const RawResponse submit = api().post("/api/v1/forward_backward", forward_backward_body(model, 1, data));
  if (submit.status == 200) {
    EXPECT_NO_THROW(api().await_failure(string_field(submit.json(), "request_id")));
  } else {
    EXPECT_TRUE(is_error(submit, 404));
  }
}

}  // namespace
}  // namespace tinker::local::test
