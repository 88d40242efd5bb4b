// A loopback HTTP CONNECT proxy for transport tests, on its own io_context and thread.
//
// It accepts `CONNECT host:port`, optionally demands an exact Proxy-Authorization value (407
// otherwise), connects to the target (502 if that fails), answers 200 and relays bytes both ways
// until either side closes. Anything but CONNECT gets 405.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tinker::test {

/// One CONNECT request as the proxy saw it.
class ConnectRecord {
 public:
  ConnectRecord() = default;

  std::string method;
  std::string target;                        ///< "host:port"
  std::optional<std::string> authorization;  ///< the Proxy-Authorization value, if sent
  int status = 0;                            ///< what the proxy answered
};

class ConnectProxy {
 public:
  /// `required_authorization`: the exact Proxy-Authorization value to demand, e.g.
  /// "Basic dXNlcjpwYXNz"; nothing = no authentication.
  explicit ConnectProxy(std::optional<std::string> required_authorization = std::nullopt);
  ~ConnectProxy();
  ConnectProxy(const ConnectProxy&) = delete;
  ConnectProxy& operator=(const ConnectProxy&) = delete;

  std::uint16_t port() const noexcept;
  /// "http://127.0.0.1:<port>".
  std::string url() const;

  std::size_t tunnels_established() const;
  std::size_t tunnels_open() const;
  std::vector<std::string> connect_targets() const;  ///< targets of every CONNECT, in order
  std::vector<ConnectRecord> records() const;

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace tinker::test
