// TLS for the HTTP transport: the client context (trust store, protocol floor), per-connection
// setup (SNI, host-name or IP verification) and readable handshake failures.
//
// Only src/http/*.cpp include this header: it pulls in Beast and OpenSSL.
#pragma once

#include <tinker/config.hpp>

#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/system/error_code.hpp>

#include <memory>
#include <string>
#include <string_view>

namespace tinker::http {

using TlsStream = boost::asio::ssl::stream<boost::beast::tcp_stream>;

/// A TLS client context: TLS 1.2 or newer; peers are verified unless `options.verify_peer` is
/// false; the trust store is `options.ca_file` if set, else the system store (which honours
/// SSL_CERT_FILE / SSL_CERT_DIR). Throws `tinker::error` (invalid_configuration) naming
/// `tls.ca_file` when the bundle cannot be loaded. One context serves every connection of a client.
std::shared_ptr<boost::asio::ssl::context> make_tls_context(const TlsOptions& options);

/// Prepares a not yet handshaken stream for `host` (a DNS name or an IP literal; IPv6 may be in
/// brackets): sets SNI for names (never for IP literals, RFC 6066 section 3) and, when
/// `verify_peer`, verifies the certificate chain and that the certificate matches `host` (DNS
/// names against SubjectAltName DNS entries, IP literals against IP entries). Host matching is
/// OpenSSL's own (X509_VERIFY_PARAM), so a mismatch shows up in the verify result as
/// "hostname mismatch" / "IP address mismatch". Throws `tinker::error` (tls_error) if OpenSSL
/// rejects the settings (out of memory, a host name with embedded NULs).
void prepare_tls_stream(TlsStream& stream, const std::string& host, bool verify_peer);

/// A readable reason for a failed TLS operation on `ssl` (may be null), e.g.
/// "certificate verify failed: self-signed certificate in certificate chain" or
/// "certificate verify failed: hostname mismatch". Never contains key material.
std::string describe_tls_error(const boost::system::error_code& ec, const SSL* ssl);
std::string describe_tls_error(const boost::system::error_code& ec, TlsStream& stream);

/// True if `host` is an IPv4 or IPv6 literal (IPv6 with or without brackets).
bool is_ip_literal(std::string_view host);

}  // namespace tinker::http
