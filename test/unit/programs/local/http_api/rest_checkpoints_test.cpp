// doc/rest.md, doc/local.md#checkpoints: checkpoint listings, delete, publish/unpublish, TTL,
// archive (302 to a real tar served by the server), weights_info.
#include "unit/programs/local/support/expectations.hpp"
#include "unit/programs/local/support/local_server.hpp"
#include "unit/programs/local/support/training_steps.hpp"

#include <boost/json/parse.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>

namespace tinker::local::test {
namespace {

namespace json = boost::json;

class HttpApiRestCheckpoints : public LocalServerTest {
 protected:
  void SetUp() override {
    session = api().create_session();
    json::object body = json::parse(R"({"model_seq_id": 0, "base_model": "tinker-local/tiny-lm", "type": "create_model",
        "lora_config": {"rank": 4, "train_unembed": true, "train_mlp": true, "train_attn": false}})")
                            .as_object();
    body["session_id"] = session;
    (void)api().call("/api/v1/create_model", body);
    model = std::make_unique<TrainingModel>(api(), session + ":train:0");
  }

  std::string run_path() const { return "/api/v1/training_runs/" + model->id(); }

  json::value checkpoint(const std::string& checkpoint_id) {
    const json::value list = api().get(run_path() + "/checkpoints").json();
    for (const json::value& c : items(list, "checkpoints")) {
      if (string_field(c, "checkpoint_id") == checkpoint_id) return c;
    }
    return nullptr;
  }

  RawResponse as_other_user(std::string_view method, const std::string& target, std::string body = {}) {
    HeaderList headers{{"X-API-Key", "tml-another-user"}, {"Content-Type", "application/json"}};
    return api().http().request(method, target, headers, std::move(body));
  }

  std::string session;
  std::unique_ptr<TrainingModel> model;
};

TEST_F(HttpApiRestCheckpoints, RunCheckpointsListBothKinds) {
  (void)model->save("w1");
  (void)model->save_for_sampler("s1");
  const RawResponse response = api().get(run_path() + "/checkpoints");
  ASSERT_EQ(response.status, 200) << response.describe();
  ASSERT_TRUE(is_json_answer(response));
  const json::value w1 = checkpoint("weights/w1");
  const json::value s1 = checkpoint("sampler_weights/s1");
  ASSERT_FALSE(w1.is_null()) << response.body;
  ASSERT_FALSE(s1.is_null()) << response.body;
  EXPECT_EQ(string_field(w1, "checkpoint_type"), "training");
  EXPECT_EQ(string_field(s1, "checkpoint_type"), "sampler");
  EXPECT_EQ(string_field(s1, "tinker_path"), "tinker://" + model->id() + "/sampler_weights/s1");
}

TEST_F(HttpApiRestCheckpoints, UserCheckpointsAreNewestFirstWithACursor) {
  (void)model->save("c1");
  (void)model->save("c2");
  (void)model->save_for_sampler("c3");
  const RawResponse page = api().get("/api/v1/checkpoints?limit=2&offset=0");
  ASSERT_EQ(page.status, 200) << page.describe();
  const json::value body = page.json();
  const json::array& listed = items(body, "checkpoints");
  ASSERT_EQ(listed.size(), 2u) << page.body;
  EXPECT_EQ(string_field(listed[0], "checkpoint_id"), "sampler_weights/c3");
  EXPECT_EQ(string_field(listed[1], "checkpoint_id"), "weights/c2");
  const json::value& cursor = field(body, "cursor");
  EXPECT_EQ(field(cursor, "offset").to_number<std::int64_t>(), 0);
  EXPECT_EQ(field(cursor, "limit").to_number<std::int64_t>(), 2);
  EXPECT_EQ(field(cursor, "total_count").to_number<std::int64_t>(), 3);
  const json::value rest = api().get("/api/v1/checkpoints?limit=2&offset=2").json();
  ASSERT_EQ(items(rest, "checkpoints").size(), 1u);
  EXPECT_EQ(string_field(items(rest, "checkpoints")[0], "checkpoint_id"), "weights/c1");
}

TEST_F(HttpApiRestCheckpoints, DeleteRemovesTheCheckpointAndIsAudited) {
  const std::string path = model->save("doomed");
  EXPECT_EQ(as_other_user("DELETE", run_path() + "/checkpoints/weights/doomed").status, 404);
  const RawResponse deleted = api().del(run_path() + "/checkpoints/weights/doomed");
  EXPECT_GE(deleted.status, 200);
  EXPECT_LT(deleted.status, 300) << deleted.describe();
  EXPECT_TRUE(checkpoint("weights/doomed").is_null());
  EXPECT_TRUE(is_error(api().del(run_path() + "/checkpoints/weights/doomed"), 404));

  const RawResponse audit = api().get("/api/v1/audit?event_type=all");
  ASSERT_EQ(audit.status, 200) << audit.describe();
  bool found = false;
  for (const json::value& entry : items(audit.json(), "entries")) {
    if (string_field(entry, "event") == "checkpoint.delete") {
      found = true;
      EXPECT_FALSE(string_field(entry, "timestamp").empty());
      if (const json::value* p = entry.as_object().if_contains("tinker_path")) {
        EXPECT_EQ(p->as_string(), path);
      }
    }
  }
  EXPECT_TRUE(found) << audit.body;
}

TEST_F(HttpApiRestCheckpoints, PublishAndUnpublishFollowThe409Rules) {
  const std::string path = model->save("shared");
  const std::string target = run_path() + "/checkpoints/weights/shared/publish";
  const json::value info_request{{"tinker_path", path}};
  EXPECT_EQ(as_other_user("POST", "/api/v1/weights_info", to_text(info_request)).status, 404);
  EXPECT_EQ(as_other_user("POST", target).status, 404);

  const RawResponse published = api().http().request("POST", target, api().auth());
  EXPECT_LT(published.status, 300) << published.describe();
  EXPECT_EQ(field(checkpoint("weights/shared"), "public"), json::value(true));
  EXPECT_TRUE(is_error(api().http().request("POST", target, api().auth()), 409));
  // A public checkpoint is readable by others, and its run is "accessible" to them though not
  // "owned" (tinker-local's choice).
  EXPECT_EQ(as_other_user("POST", "/api/v1/weights_info", to_text(info_request)).status, 200);
  const RawResponse accessible = as_other_user("GET", "/api/v1/training_runs?access_scope=accessible");
  ASSERT_EQ(accessible.status, 200) << accessible.describe();
  EXPECT_NE(accessible.body.find(model->id()), std::string::npos) << accessible.body;
  const RawResponse owned = as_other_user("GET", "/api/v1/training_runs?access_scope=owned");
  ASSERT_EQ(owned.status, 200) << owned.describe();
  EXPECT_EQ(owned.body.find(model->id()), std::string::npos) << owned.body;

  const RawResponse unpublished = api().del(target);
  EXPECT_LT(unpublished.status, 300) << unpublished.describe();
  EXPECT_EQ(field(checkpoint("weights/shared"), "public"), json::value(false));
  EXPECT_TRUE(is_error(api().del(target), 409));
  EXPECT_EQ(as_other_user("POST", "/api/v1/weights_info", to_text(info_request)).status, 404);
}

TEST_F(HttpApiRestCheckpoints, TtlCanBeSetClearedAndMustBePositive) {
  (void)model->save("ttl");
  const std::string target = run_path() + "/checkpoints/weights/ttl/ttl";
  EXPECT_LT(api().put(target, json::object{{"ttl_seconds", 86400}}).status, 300);
  EXPECT_TRUE(field(checkpoint("weights/ttl"), "expires_at").is_string());
  EXPECT_LT(api().put(target, json::object{{"ttl_seconds", nullptr}}).status, 300);
  const json::value cleared = checkpoint("weights/ttl");
  const json::value* expires = cleared.as_object().if_contains("expires_at");
  EXPECT_TRUE(expires == nullptr || expires->is_null()) << to_text(cleared);
  EXPECT_TRUE(is_error(api().put(target, json::object{{"ttl_seconds", 0}}), 400));
  EXPECT_TRUE(is_error(api().put(target, json::object{{"ttl_seconds", -5}}), 400));
  EXPECT_TRUE(is_error(api().put(run_path() + "/checkpoints/weights/none/ttl", json::object{{"ttl_seconds", 5}}), 404));
}

TEST_F(HttpApiRestCheckpoints, WeightsInfoDescribesTheRun) {
  const std::string path = model->save("info");
  const RawResponse response = api().post("/api/v1/weights_info", json::object{{"tinker_path", path}});
  ASSERT_EQ(response.status, 200) << response.describe();
  ASSERT_TRUE(is_json_answer(response));
  const json::value info = response.json();
  EXPECT_EQ(string_field(info, "base_model"), tiny_model);
  EXPECT_EQ(field(info, "is_lora"), json::value(true));
  EXPECT_EQ(field(info, "lora_rank").to_number<std::int64_t>(), 4);
  EXPECT_EQ(field(info, "train_unembed"), json::value(true));
  EXPECT_EQ(field(info, "train_mlp"), json::value(true));
  EXPECT_EQ(field(info, "train_attn"), json::value(false));
}

// ---- archive -------------------------------------------------------------------------------------

std::time_t parse_http_date(const std::string& text) {
  std::tm tm{};
  if (strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm) == nullptr) return -1;
  return timegm(&tm);
}

std::string run_command(const std::string& command) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("popen failed: " + command);
  char buffer[4096];
  for (std::size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  if (pclose(pipe) != 0) throw std::runtime_error("command failed: " + command + "\n" + out);
  return out;
}

class HttpApiArchive : public HttpApiRestCheckpoints {
 protected:
  /// GETs the archive URL without auth and checks the tar with the system `tar`.
  void check_download(const std::string& url, int rank) {
    const std::string prefix = api().server().base_url();
    ASSERT_EQ(url.rfind(prefix, 0), 0u) << url << " is not served by " << prefix;
    RawHttpClient anonymous("127.0.0.1", api().port());
    const RawResponse tar = anonymous.request("GET", url.substr(prefix.size()), {});
    ASSERT_EQ(tar.status, 200) << tar.describe();
    EXPECT_EQ(tar.header("Content-Type").value_or(""), "application/x-tar");
    EXPECT_EQ(tar.header("Content-Length").value_or(""), std::to_string(tar.body.size()));

    const std::string file = (data_dir.path() / "downloaded.tar").string();
    std::ofstream(file, std::ios::binary) << tar.body;
    std::string listing = run_command("tar -tf '" + file + "'");
    std::vector<std::string> names;
    for (std::size_t start = 0, end; (end = listing.find('\n', start)) != std::string::npos; start = end + 1) {
      names.push_back(listing.substr(start, end - start));
    }
    std::sort(names.begin(), names.end());
    EXPECT_EQ(names,
              (std::vector<std::string>{"adapter_config.json", "adapter_model.safetensors", "checkpoint_complete"}))
        << listing;

    const json::value config = json::parse(run_command("tar -xOf '" + file + "' adapter_config.json"));
    EXPECT_EQ(string_field(config, "base_model_name_or_path"), tiny_model);
    EXPECT_EQ(field(config, "r").to_number<std::int64_t>(), rank);
    EXPECT_TRUE(run_command("tar -xOf '" + file + "' checkpoint_complete").empty());
    // safetensors: 8-byte little-endian header length, then a JSON header.
    const std::string tensors = run_command("tar -xOf '" + file + "' adapter_model.safetensors");
    ASSERT_GE(tensors.size(), 8u);
    std::uint64_t header_length = 0;
    std::memcpy(&header_length, tensors.data(), 8);
    ASSERT_LE(8 + header_length, tensors.size());
    const json::value header = json::parse(tensors.substr(8, header_length));
    EXPECT_TRUE(header.is_object());
  }
};

TEST_F(HttpApiArchive, ArchiveRedirectsToATarServedByTheServer) {
  (void)model->save_for_sampler("export");
  const RawResponse response = api().get(run_path() + "/checkpoints/sampler_weights/export/archive");
  ASSERT_EQ(response.status, 302) << response.describe();
  const std::string location = response.header("Location").value_or("");
  const std::time_t expires = parse_http_date(response.header("Expires").value_or(""));
  ASSERT_GT(expires, 0) << "Expires is not an HTTP-date\n" << response.describe();
  EXPECT_NEAR(static_cast<double>(expires - std::time(nullptr)), 15 * 60, 120);
  check_download(location, 4);
}

TEST_F(HttpApiArchive, TrainingCheckpointArchiveToo) {
  (void)model->save("export-w");
  const RawResponse response = api().get(run_path() + "/checkpoints/weights/export-w/archive");
  ASSERT_EQ(response.status, 302) << response.describe();
  check_download(response.header("Location").value_or(""), 4);
}

class HttpApiArchiveBuilding : public HttpApiArchive {
 protected:
  HttpApiArchiveBuilding() { options.archive_building_polls = 2; }
};

TEST_F(HttpApiArchiveBuilding, ArchiveAnswers503WhileBuilding) {
  (void)model->save_for_sampler("slow");
  const std::string target = run_path() + "/checkpoints/sampler_weights/slow/archive";
  EXPECT_EQ(api().get(target).status, 503);
  EXPECT_EQ(api().get(target).status, 503);
  EXPECT_EQ(api().get(target).status, 302);
}

class HttpApiArchiveJson : public HttpApiArchive {
 protected:
  HttpApiArchiveJson() { options.archive_json_form = true; }
};

TEST_F(HttpApiArchiveJson, ArchiveJsonForm) {
  (void)model->save_for_sampler("json");
  const RawResponse response = api().get(run_path() + "/checkpoints/sampler_weights/json/archive");
  ASSERT_EQ(response.status, 200) << response.describe();
  ASSERT_TRUE(is_json_answer(response));
  EXPECT_EQ(string_field(response.json(), "expires").back(), 'Z');
  check_download(string_field(response.json(), "url"), 4);
}

TEST_F(HttpApiArchive, DownloadUrlExpires) {
  (void)model->save_for_sampler("expiring");
  const std::string location =
      api().get(run_path() + "/checkpoints/sampler_weights/expiring/archive").header("Location").value_or("");
  api().server().advance_clock(std::chrono::seconds(16 * 60));
  RawHttpClient anonymous("127.0.0.1", api().port());
  const RawResponse gone = anonymous.request("GET", location.substr(api().server().base_url().size()), {});
  EXPECT_TRUE(gone.status == 404 || gone.status == 410) << gone.describe();
}

TEST_F(HttpApiArchive, UnknownCheckpointArchiveIs404) {
  EXPECT_TRUE(is_error(api().get(run_path() + "/checkpoints/weights/missing/archive"), 404));
}

}  // namespace
}  // namespace tinker::local::test
