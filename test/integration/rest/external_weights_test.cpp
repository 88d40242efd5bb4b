// External (Hugging Face PEFT) weights end to end against in-process tinker-local
// (doc/rest.md#external-weights): a trained adapter exported with save_weights_external, its
// files' URLs, their download (the same files as the checkpoint archive of the same weights), the
// upload of that directory back as a new external checkpoint, a PUT that fails once (retried) or
// for good (reported, nothing registered), and the refusals made before anything is sent.
#include "integration/download/download_support.hpp"
#include "integration/rest/rest_support.hpp"
#include "integration/sync/sync_support.hpp"
#include "support/tar_builder.hpp"

#include <tinker/sync/rest_client.hpp>
#include <tinker/sync/training_client.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

namespace tinker::test {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;

constexpr std::int64_t kRank = 4;

// A model trained a few steps, exported as external weights and saved for sampling at the same
// point (its archive holds the same adapter).
class Exported {
 public:
  std::string run_id;
  SaveWeightsExternalResponse external;
  std::string sampler_path;
};

asio::awaitable<Exported> train_and_export(ServiceClient& service) {
  const LoraTrainingOptions options(std::string(tiny_model), kRank);
  TrainingClient training = co_await service.async_create_lora_training_client(options, use_awaitable);
  for (int step = 0; step < 3; ++step) {
    ForwardBackwardInput input = tiny_cross_entropy_input();
    auto pass = co_await training.async_forward_backward(std::move(input), use_awaitable);
    const AdamParams adam(1e-2);
    auto optim = co_await training.async_optim_step(adam, use_awaitable);
    co_await pass.async_get(use_awaitable);
    co_await optim.async_get(use_awaitable);
  }
  Exported out;
  out.run_id = training.model_id();
  const SaveWeightsExternalOptions save(std::int64_t{7200});
  auto exporting = co_await training.async_save_weights_external("hf-export", save, use_awaitable);
  out.external = co_await exporting.async_get(use_awaitable);
  auto sampler = co_await training.async_save_weights_for_sampler("same-weights", std::nullopt, use_awaitable);
  out.sampler_path = (co_await sampler.async_get(use_awaitable)).path.value_or("");
  co_return out;
}

class ExternalWeights : public RestService {
 protected:
  void SetUp() override {
    RestService::SetUp();
    ClientOptions options = client_options();
    options.retry.initial_delay = std::chrono::milliseconds(1);
    options.retry.max_delay = std::chrono::milliseconds(5);
    service = make_fast_service(ServiceClientOptions(options));
  }
  void TearDown() override {
    service.reset();
    RestService::TearDown();
  }

  template <class T>
  T await(std::future<T>& future) {
    return run_until_ready(io, future);
  }

  // The archive of `path` extracted under `dir`: what the checkpoint download gives.
  fs::path archive_of(const std::string& path, const fs::path& dir) {
    RestClient rest = service->create_rest_client();
    auto done = rest.async_download_checkpoint(path, DownloadOptions(dir), asio::use_future);
    return await(done).path;
  }

  std::unique_ptr<ServiceClient> service;
  TempDir scratch{"tinker-external"};
};

TEST_F(ExternalWeights, ExportDownloadAndUploadBackThroughTheAsyncApi) {
  const Exported made = run(train_and_export(*service));
  EXPECT_EQ(made.external.path, "tinker://" + made.run_id + "/external_weights/hf-export");
  ASSERT_TRUE(made.external.size_bytes.has_value());
  RestClient rest = service->create_rest_client();

  auto urls_future = rest.async_get_external_weights_urls(made.external.path, asio::use_future);
  const ExternalWeightsUrlsResponse urls = await(urls_future);
  ASSERT_EQ(urls.urls.size(), 2u);
  EXPECT_EQ(urls.urls.count("adapter_config.json"), 1u);
  EXPECT_EQ(urls.urls.count("adapter_model.safetensors"), 1u);

  auto download =
      rest.async_download_external_weights(made.external.path, DownloadOptions(scratch.path()), asio::use_future);
  const DownloadResult files = await(download);
  EXPECT_EQ(files.path, scratch.path() / (made.run_id + "_external_weights_hf-export"));
  EXPECT_EQ(files.files, (std::vector<std::string>{"adapter_config.json", "adapter_model.safetensors"}));
  EXPECT_EQ(static_cast<std::int64_t>(files.archive_bytes), *made.external.size_bytes);
  // No staging directory is left beside the target.
  EXPECT_EQ(entries_of(scratch.path()), std::vector<std::string>{files.path.filename().string()});

  // The same PEFT files as the archive of the same weights.
  const fs::path archive = archive_of(made.sampler_path, scratch.path() / "archive");
  for (const char* name : {"adapter_model.safetensors", "adapter_config.json"}) {
    EXPECT_EQ(read_file(files.path / name), read_file(archive / name)) << name;
  }

  // Listed (and typed) like any checkpoint; neither the run's last training nor sampler checkpoint.
  auto listed = rest.async_list_checkpoints(made.run_id, asio::use_future);
  const CheckpointsListResponse list = await(listed);
  const auto external = std::find_if(list.checkpoints.begin(), list.checkpoints.end(),
                                     [&](const Checkpoint& c) { return c.tinker_path == made.external.path; });
  ASSERT_NE(external, list.checkpoints.end());
  EXPECT_EQ(external->checkpoint_type, CheckpointType::external);
  EXPECT_TRUE(external->expires_at.has_value());
  auto run_future = rest.async_get_training_run(made.run_id, AccessScope::owned, asio::use_future);
  const TrainingRun run_info = await(run_future);
  ASSERT_TRUE(run_info.last_sampler_checkpoint.has_value());
  EXPECT_EQ(run_info.last_sampler_checkpoint->tinker_path, made.sampler_path);

  // Upload the downloaded directory back: a new external checkpoint with the same files.
  const ExternalWeightsUploadStartRequest start{std::string(tiny_model), LoraConfig(kRank)};
  auto uploading =
      rest.async_upload_external_weights(files.path, start, ExternalWeightsUploadOptions(), asio::use_future);
  const std::string uploaded = await(uploading).tinker_path;
  EXPECT_EQ(TinkerPath::parse(uploaded).type, CheckpointType::external);
  auto again =
      rest.async_download_external_weights(uploaded, DownloadOptions(scratch.path() / "again"), asio::use_future);
  const DownloadResult round_trip = await(again);
  for (const char* name : {"adapter_model.safetensors", "adapter_config.json"}) {
    EXPECT_EQ(read_file(round_trip.path / name), read_file(files.path / name)) << name;
  }
  // The PUTs went to the upload URLs without any Tinker credential.
  const auto puts = requests_to(server->audit(), "adapter_model.safetensors");
  const auto put =
      std::find_if(puts.begin(), puts.end(), [](const local::RequestRecord& r) { return r.method == "PUT"; });
  ASSERT_NE(put, puts.end());
  EXPECT_FALSE(put->credentials);
  EXPECT_EQ(put->status, 200);

  // Deletable like any checkpoint.
  auto deleting = rest.async_delete_checkpoint_from_tinker_path(uploaded, asio::use_future);
  await(deleting);
  auto gone = rest.async_get_external_weights_urls(uploaded, asio::use_future);
  EXPECT_EQ(failure_of(io, gone), errc::not_found);
}

TEST_F(ExternalWeights, BlockingFormsExportDownloadAndUpload) {
  sync::ServiceClient sync_service{ServiceClientOptions(client_options())};
  sync::TrainingClient training =
      sync_service.create_lora_training_client(LoraTrainingOptions(std::string(tiny_model), kRank));
  training.forward_backward(tiny_cross_entropy_input()).get();
  training.optim_step(AdamParams(1e-2)).get();
  const SaveWeightsExternalResponse saved = training.save_weights_external("blocking").get();
  sync::RestClient rest = sync_service.create_rest_client();
  EXPECT_EQ(rest.get_external_weights_urls(saved.path).urls.size(), 2u);
  const DownloadResult files = rest.download_external_weights(saved.path, DownloadOptions(scratch.path()));
  EXPECT_EQ(files.files.size(), 2u);

  // The three steps by hand.
  const ExternalWeightsUploadStartResponse started =
      rest.external_weights_upload_start(ExternalWeightsUploadStartRequest(std::string(tiny_model), LoraConfig(kRank)));
  ASSERT_EQ(started.urls.size(), 2u);
  for (const auto& [name, target] : started.urls) {
    EXPECT_FALSE(target.headers.empty()) << "tinker-local's PUTs need the upload's token header";
    rest.external_weights_upload_put(target, files.path / name);
  }
  const std::string path = rest.external_weights_upload_finish(started.upload_id).tinker_path;
  EXPECT_EQ(TinkerPath::parse(path).type, CheckpointType::external);
  // A repeated finish (a retried call) answers the same path.
  EXPECT_EQ(rest.external_weights_upload_finish(started.upload_id).tinker_path, path);
  const std::string via_directory =
      rest.upload_external_weights(files.path,
                                   ExternalWeightsUploadStartRequest(std::string(tiny_model), LoraConfig(kRank)))
          .tinker_path;
  EXPECT_NE(via_directory, path);
}

TEST_F(ExternalWeights, APutThatFailsOnceIsRetried) {
  const Exported made = run(train_and_export(*service));
  RestClient rest = service->create_rest_client();
  auto download =
      rest.async_download_external_weights(made.external.path, DownloadOptions(scratch.path()), asio::use_future);
  const fs::path dir = await(download).path;
  server->set_faults({fault_once("_uploads", local::FaultKind::status, 503)});
  const ExternalWeightsUploadStartRequest start{std::string(tiny_model), LoraConfig(kRank)};
  auto uploading = rest.async_upload_external_weights(dir, start, ExternalWeightsUploadOptions(), asio::use_future);
  EXPECT_EQ(TinkerPath::parse(await(uploading).tinker_path).type, CheckpointType::external);
  std::size_t puts = 0;
  for (const local::RequestRecord& r : server->audit().requests) puts += r.method == "PUT" ? 1 : 0;
  EXPECT_EQ(puts, 3u) << "two files, one of them sent twice";
}

TEST_F(ExternalWeights, APutThatFailsForGoodNamesTheFileAndRegistersNothing) {
  const Exported made = run(train_and_export(*service));
  RestClient rest = service->create_rest_client();
  auto download =
      rest.async_download_external_weights(made.external.path, DownloadOptions(scratch.path()), asio::use_future);
  const fs::path dir = await(download).path;
  auto before_future = rest.async_list_user_checkpoints(ListUserCheckpointsOptions(), asio::use_future);
  const std::size_t before = await(before_future).checkpoints.size();

  local::FaultRule always("_uploads", local::FaultKind::status);
  always.status = 503;
  always.probability = 1.0;
  server->set_faults({always});
  ExternalWeightsUploadOptions options;
  options.max_put_retries = 2;
  const ExternalWeightsUploadStartRequest start{std::string(tiny_model), LoraConfig(kRank)};
  diagnostics diag;
  auto uploading = rest.async_upload_external_weights(dir, start, options, diag, asio::use_future);
  EXPECT_EQ(failure_of(io, uploading), errc::request_failed);
  EXPECT_NE(diag.message.find("the upload of adapter_config.json"), std::string::npos) << diag.message;
  EXPECT_NE(diag.message.find("3 attempt"), std::string::npos) << diag.message;
  EXPECT_NE(diag.message.find("nothing was registered"), std::string::npos) << diag.message;
  EXPECT_TRUE(requests_to(server->audit(), "external_weights_upload_finish").empty());
  server->set_faults({});
  auto after_future = rest.async_list_user_checkpoints(ListUserCheckpointsOptions(), asio::use_future);
  EXPECT_EQ(await(after_future).checkpoints.size(), before);
}

TEST_F(ExternalWeights, ServerRefusesAPutWithoutTheUploadTokenAndAnAdapterOfAnotherRank) {
  const Exported made = run(train_and_export(*service));
  RestClient rest = service->create_rest_client();
  auto download =
      rest.async_download_external_weights(made.external.path, DownloadOptions(scratch.path()), asio::use_future);
  const fs::path dir = await(download).path;
  const ExternalWeightsUploadStartRequest wrong_rank{std::string(tiny_model), LoraConfig(kRank * 2)};
  auto start_future = rest.async_external_weights_upload_start(wrong_rank, asio::use_future);
  const ExternalWeightsUploadStartResponse started = await(start_future);
  // Without the header the upload URL answers 403.
  const ExternalWeightsUploadUrl bare(started.urls.at("adapter_config.json").url);
  diagnostics put_diag;
  auto bare_put = rest.async_external_weights_upload_put(bare, dir / "adapter_config.json", ExternalWeightsPutOptions(),
                                                         put_diag, asio::use_future);
  EXPECT_EQ(failure_of(io, bare_put), errc::request_failed);
  EXPECT_EQ(put_diag.http_status, 403);
  for (const auto& [name, target] : started.urls) {
    auto put =
        rest.async_external_weights_upload_put(target, dir / name, ExternalWeightsPutOptions(), asio::use_future);
    await(put);
  }
  diagnostics diag;
  auto finish = rest.async_external_weights_upload_finish(started.upload_id, diag, asio::use_future);
  EXPECT_EQ(failure_of(io, finish), errc::bad_request);
  EXPECT_NE(diag.message.find("adapter_config.json: r is 4"), std::string::npos) << diag.message;
  EXPECT_NE(diag.message.find("nothing was registered"), std::string::npos) << diag.message;
}

TEST_F(ExternalWeights, RefusalsBeforeSending) {
  RestClient rest = service->create_rest_client();
  diagnostics diag;
  auto wrong_kind = rest.async_get_external_weights_urls("tinker://run:train:0/weights/x", diag, asio::use_future);
  EXPECT_EQ(failure_of(io, wrong_kind), errc::invalid_argument);
  EXPECT_NE(diag.message.find("external_weights/<name>"), std::string::npos) << diag.message;
  DownloadOptions archive_only(scratch.path());
  archive_only.keep_archive_only = true;
  auto download = rest.async_download_external_weights("tinker://r/external_weights/x", archive_only, asio::use_future);
  EXPECT_EQ(failure_of(io, download), errc::invalid_argument);

  const LoraTrainingOptions options(std::string(tiny_model), kRank);
  auto made = service->async_create_lora_training_client(options, asio::use_future);
  TrainingClient training = await(made);
  SaveWeightsExternalOptions short_ttl(std::int64_t{60});
  diagnostics save_diag;
  auto refused = training.async_save_weights_external("x", short_ttl, save_diag, asio::use_future);
  EXPECT_EQ(failure_of(io, refused), errc::invalid_argument);
  EXPECT_NE(save_diag.message.find("ttl_seconds must be 3600..315360000"), std::string::npos) << save_diag.message;
  // tinker-local cannot encrypt: recipients are refused by the server (400), and the turn is freed.
  SaveWeightsExternalOptions encrypted;
  encrypted.age_encryption_recipients = std::vector<std::string>{"age1qqqq"};
  diagnostics age_diag;
  auto age = training.async_save_weights_external("x", encrypted, age_diag, asio::use_future);
  EXPECT_EQ(failure_of(io, age), errc::bad_request);
  EXPECT_EQ(age_diag.http_status, 400);
  EXPECT_NE(age_diag.message.find("cannot encrypt"), std::string::npos) << age_diag.message;
  auto fine = training.async_save_weights_external("after-refusals", SaveWeightsExternalOptions(), asio::use_future);
  Future<SaveWeightsExternalResponse> saved = await(fine);
  auto result = saved.async_get(asio::use_future);
  EXPECT_EQ(await(result).path, "tinker://" + training.model_id() + "/external_weights/after-refusals");
}

}  // namespace
}  // namespace tinker::test
