// tinker-bench's cost guard (doc/bench.md#cost-guard): against a URL that is not local and without --yes or a
// terminal to confirm on, it refuses before anything is sent. The URL's host is a name no resolver knows, and
// http_proxy points at a socket this test listens on: any request the program sent, a DNS-free proxied connect
// included, would arrive there. The second test is the control: with --yes the connection does arrive.
#include "integration/programs/bench/bench_program.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <thread>

namespace tinker::test {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

class CostGuardTest : public ::testing::Test {
 protected:
  CostGuardTest() : acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) { acceptor.non_blocking(true); }

  // The program's environment: the listening socket as the proxy of every http:// URL, and a key.
  ChildEnvironment proxied() const {
    ChildEnvironment environment;
    const std::string proxy = "http://127.0.0.1:" + std::to_string(acceptor.local_endpoint().port());
    environment.set["http_proxy"] = proxy;
    environment.set["HTTP_PROXY"] = proxy;
    environment.set["TINKER_API_KEY"] = "tml-cost-guard-test";
    environment.unset = {"no_proxy", "NO_PROXY"};
    return environment;
  }

  // A connection queued on the listening socket (the program's, since nothing else knows the port).
  bool connection_arrived() {
    tcp::socket socket(io);
    boost::system::error_code ec;
    acceptor.accept(socket, ec);
    return !ec;
  }

  asio::io_context io;
  tcp::acceptor acceptor;
};

const std::vector<std::string> paid_run = {
    "sample", "--base-url", "http://tinker-bench-guard.invalid", "--base-model", "some/model", "--requests", "50"};

TEST_F(CostGuardTest, WithoutYesNorATerminalItRefusesBeforeSendingAnything) {
  const ProgramRun run = run_bench(paid_run, proxied(), std::chrono::seconds(60));
  EXPECT_EQ(run.exit_code, 3) << run.err;
  EXPECT_NE(run.err.find("50 operations"), std::string::npos) << "states what it would spend: " << run.err;
  EXPECT_NE(run.err.find("--yes"), std::string::npos) << run.err;
  EXPECT_TRUE(run.out.empty()) << run.out;
  EXPECT_FALSE(connection_arrived()) << "the program exited: anything it sent would be queued here";
}

TEST_F(CostGuardTest, WithYesTheSameRunReachesTheNetwork) {
  std::vector<std::string> args = paid_run;
  args.emplace_back("--yes");
  ChildEnvironment environment = proxied();
  environment.set["HF_HUB_OFFLINE"] = "1";
  Child child(args, environment);
  bool arrived = false;
  for (int i = 0; i < 3000 && !arrived; ++i) {  // the hang guard of a failure: 60 s
    arrived = connection_arrived();
    if (!arrived) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  child.kill();
  child.wait(std::chrono::seconds(10));
  EXPECT_TRUE(arrived) << "with --yes the program connects through the proxy: the refusal above is the guard's";
}

}  // namespace
}  // namespace tinker::test
