// doc/local.md#ordering-and-futures: one model's ops run strictly in seq_id order, exactly once,
// whatever order and connections they arrive on; the audit (/_admin/audit) proves it.
#include "unit/programs/local/support/expectations.hpp"
#include "unit/programs/local/support/local_server.hpp"

#include <boost/json/parse.hpp>

#include <algorithm>
#include <numeric>
#include <random>
#include <thread>

namespace tinker::local::test {
namespace {

namespace json = boost::json;

class HttpApiOrdering : public LocalServerTest {
 protected:
  void SetUp() override {
    session = api().create_session();
    model = api().create_model(session);
  }

  /// Every third op is an optim_step, the others forward_backward.
  json::object op_body(std::int64_t seq) const {
    if (seq % 3 == 0) return optim_step_body(model, seq, 1e-3);
    json::array data;
    data.emplace_back(cross_entropy_datum({seq + 3, seq + 4, seq + 5, seq + 6}));
    return forward_backward_body(model, seq, data);
  }
  static std::string op_target(std::int64_t seq) {
    return seq % 3 == 0 ? "/api/v1/optim_step" : "/api/v1/forward_backward";
  }

  /// The /_admin/audit entry of `model`.
  json::value audited_model() {
    const json::value audit = api().admin_audit();
    for (const json::value& entry : items(audit, "models")) {
      if (string_field(entry, "model_id") == model) return entry;
    }
    throw std::runtime_error("model " + model + " not in /_admin/audit: " + to_text(audit));
  }

  std::string session;
  std::string model;
};

TEST_F(HttpApiOrdering, ShuffledConcurrentArrivalIsAppliedInSeqOrderExactlyOnce) {
  constexpr std::int64_t op_count = 18;
  constexpr int connections = 4;
  std::vector<std::int64_t> order(op_count);
  std::iota(order.begin(), order.end(), 1);
  std::shuffle(order.begin(), order.end(), std::mt19937(20260808));

  std::vector<std::string> request_ids(op_count + 1);
  std::vector<std::string> failures(connections);
  std::vector<std::thread> senders;
  for (int c = 0; c < connections; ++c) {
    senders.emplace_back([&, c] {
      try {
        const std::unique_ptr<RawHttpClient> client = api().new_client();
        for (std::size_t i = static_cast<std::size_t>(c); i < order.size(); i += connections) {
          const std::int64_t seq = order[i];
          const RawResponse response = client->request(
              "POST", op_target(seq), api().auth({{"Content-Type", "application/json"}}), to_text(op_body(seq)));
          if (response.status != 200)
            throw std::runtime_error("seq " + std::to_string(seq) + ": " + response.describe());
          request_ids[static_cast<std::size_t>(seq)] = string_field(response.json(), "request_id");
        }
      } catch (const std::exception& e) {
        failures[static_cast<std::size_t>(c)] = e.what();
      }
    });
  }
  for (std::thread& t : senders) t.join();
  for (const std::string& f : failures) ASSERT_TRUE(f.empty()) << f;

  for (std::int64_t seq = 1; seq <= op_count; ++seq) {
    EXPECT_NO_THROW(api().await_json(request_ids[static_cast<std::size_t>(seq)])) << "seq " << seq;
  }

  const json::value entry = audited_model();
  std::vector<std::int64_t> expected(op_count);
  std::iota(expected.begin(), expected.end(), 1);
  EXPECT_EQ(integers(field(entry, "applied_seq_ids")), expected) << to_text(entry);
  EXPECT_EQ(field(entry, "exactly_once_in_order"), json::value(true)) << to_text(entry);
  const json::array& operations = items(entry, "operations");
  ASSERT_EQ(operations.size(), static_cast<std::size_t>(op_count));
  for (std::int64_t seq = 1; seq <= op_count; ++seq) {
    EXPECT_EQ(operations[static_cast<std::size_t>(seq - 1)].as_string(),
              seq % 3 == 0 ? "optim_step" : "forward_backward")
        << "seq " << seq;
  }

  // The in-process audit agrees, and the arrival log holds every submit with its seq_id.
  const AuditReport report = api().server().audit();
  EXPECT_TRUE(report.ok());
  std::vector<std::int64_t> arrived;
  for (const RequestRecord& r : report.requests) {
    if (r.model_id == model && r.seq_id && (r.path == "/api/v1/forward_backward" || r.path == "/api/v1/optim_step")) {
      arrived.push_back(*r.seq_id);
    }
  }
  std::vector<std::int64_t> sorted_arrivals = arrived;
  std::sort(sorted_arrivals.begin(), sorted_arrivals.end());
  EXPECT_EQ(sorted_arrivals, expected);
}

TEST_F(HttpApiOrdering, RepeatedSeqIdReturnsTheSameTicketAndRunsOnce) {
  const std::string first = api().submit(op_target(1), op_body(1));
  const std::string again = api().submit(op_target(1), op_body(1));
  EXPECT_EQ(first, again);
  const std::string second = api().submit(op_target(2), op_body(2));
  (void)api().await_json(second);
  EXPECT_EQ(api().submit(op_target(1), op_body(1)), first);  // even after it ran
  EXPECT_EQ(integers(field(audited_model(), "applied_seq_ids")), (std::vector<std::int64_t>{1, 2}));
}

TEST_F(HttpApiOrdering, LaterSeqIdIsHeldUntilTheGapIsFilled) {
  const std::string third = api().submit(op_target(3), op_body(3));
  const std::string second = api().submit(op_target(2), op_body(2));
  const RawResponse pending = api().poll(third);
  ASSERT_TRUE(is_json_answer(pending));
  EXPECT_EQ(string_field(pending.json(), "type"), "try_again");
  EXPECT_TRUE(integers(field(audited_model(), "applied_seq_ids")).empty());
  const std::string first = api().submit(op_target(1), op_body(1));
  for (const std::string& id : {first, second, third}) {
    EXPECT_NO_THROW(api().await_json(id));
  }
  EXPECT_EQ(integers(field(audited_model(), "applied_seq_ids")), (std::vector<std::int64_t>{1, 2, 3}));
}

TEST_F(HttpApiOrdering, SeqIdZeroOrNegativeIs400) {
  for (std::int64_t seq : {0, -1, -100}) {
    json::object fwd = op_body(1);
    fwd["seq_id"] = seq;
    EXPECT_TRUE(is_error(api().post("/api/v1/forward_backward", fwd), 400, "seq_id")) << seq;
    json::object optim = optim_step_body(model, seq, 1e-3);
    EXPECT_TRUE(is_error(api().post("/api/v1/optim_step", optim), 400, "seq_id")) << seq;
  }
  // A protobuf request without seq_id (0 on the wire) is refused too.
  tinker_public::ForwardBackwardRequest proto = proto_forward_backward(model, 0, {{5, 6, 7}});
  EXPECT_TRUE(is_error(api().post_raw("/api/v1/forward_backward", proto.SerializeAsString(), protobuf_type), 400));
  EXPECT_TRUE(integers(field(audited_model(), "applied_seq_ids")).empty());
}

}  // namespace
}  // namespace tinker::local::test
