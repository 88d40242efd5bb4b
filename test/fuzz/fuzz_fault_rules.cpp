// tinker-local's fault rules as users and tests write them: the `--fault` spec syntax, durations, and
// the JSON body of POST /_admin/faults. The first byte chooses 0 spec, 1 duration, 2 JSON rules. The
// rules that parse are then used as the server uses them: matched against paths, fired from a seeded
// plan, and turned into a status reply and its response head (Retry-After in each form).
#include "fuzz_support.hpp"

#include "programs/local/server/admin.hpp"
#include "programs/local/server/connection.hpp"
#include "programs/local/server/faults.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace tinker::local::front {
namespace {

void use_rules(const std::vector<FaultRule>& rules) {
  FaultPlan plan(7, rules);
  const auto now = std::chrono::system_clock::time_point(std::chrono::seconds(1'750'000'000));
  for (const std::string_view path : {"/api/v1/retrieve_future", "/api/v1/forward_backward", "/_downloads/abc",
                                      "/org/name/resolve/main/tokenizer.json"}) {
    for (int call = 0; call < 3; ++call) {
      if (const auto fault = plan.on_request(path)) {
        (void)fault_name(*fault);
        Reply reply;
        fault_status_reply(*fault, now, reply);
        std::string head;
        build_response_head(head, reply, "req-1", false, reply.body.size());
      }
    }
  }
  (void)plan.on_submit("forward_backward");
}

}  // namespace
}  // namespace tinker::local::front

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tinker::local::front;
  const tinker::fuzz::Selected input(data, size, 3);
  switch (input.choice()) {
    case 0: {
      std::string error;
      if (const auto rule = parse_fault_spec(input.rest(), error)) {
        use_rules({*rule});
      } else if (error.empty()) {
        tinker::fuzz::property_failed("parse_fault_spec refused a spec without saying why");
      }
      break;
    }
    case 1: (void)parse_duration(input.rest()); break;
    default: try { use_rules(parse_fault_rules_json(input.rest()));
      } catch (const std::runtime_error&) {
      }
      break;
  }
  return 0;
}
