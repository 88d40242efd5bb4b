#include "http/tls.hpp"
#include "http/url.hpp"

#include <tinker/error.hpp>

#include <boost/asio/error.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl/error.hpp>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include <filesystem>
#include <system_error>

namespace tinker::http {
namespace ssl = boost::asio::ssl;

namespace {

// Why a CA bundle could not be loaded. OpenSSL's first queued error for a missing file is a
// bare "system lib", so the common cases are checked here first.
std::string ca_file_problem(const std::string& path, const boost::system::error_code& ec) {
  std::error_code fs_ec;
  const auto status = std::filesystem::status(path, fs_ec);
  if (!std::filesystem::exists(status)) return "no such file";
  if (std::filesystem::is_directory(status)) return "is a directory";
  return ec.message();
}

void load_trust_store(ssl::context& context, const TlsOptions& options) {
  boost::system::error_code ec;
  if (!options.ca_file) {
    // A missing system store is not an error here: verification fails later with a clear
    // "unable to get local issuer certificate", which points at the real problem.
    context.set_default_verify_paths(ec);
    ERR_clear_error();
    return;
  }
  const std::string& path = *options.ca_file;
  context.load_verify_file(path, ec);
  if (ec) {
    std::string reason = ca_file_problem(path, ec);
    // Leftover entries would make a later, unrelated SSL call on this thread look failed.
    ERR_clear_error();
    throw tinker::error(errc::invalid_configuration, "tls.ca_file: cannot load CA bundle '" + path + "': " + reason);
  }
}

[[noreturn]] void throw_tls_setup_error(const char* what) {
  ERR_clear_error();
  throw tinker::error(errc::tls_error, std::string("TLS setup failed: ") + what);
}

// Matching is done by OpenSSL during the handshake (the same X509_check_host/X509_check_ip
// that asio::ssl::host_name_verification calls), because then a mismatch is recorded in the
// verify result and describe_tls_error can say "hostname mismatch" instead of a generic failure.
void require_host_match(SSL* ssl, const std::string& host, bool ip_literal) {
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
  if (ip_literal) {
    if (X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str()) != 1) throw_tls_setup_error("invalid IP address");
    return;
  }
  // No partial wildcards ("w*.example.com"), as curl and browsers.
  SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  if (SSL_set1_host(ssl, host.c_str()) != 1) throw_tls_setup_error("invalid host name");
}

bool is_verify_failure(const boost::system::error_code& ec) {
  return ec.category() == boost::asio::error::get_ssl_category() &&
         ERR_GET_REASON(static_cast<unsigned long>(ec.value())) == SSL_R_CERTIFICATE_VERIFY_FAILED;
}

}  // namespace

bool is_ip_literal(std::string_view host) {
  boost::system::error_code ec;
  boost::asio::ip::make_address(host_without_brackets(host), ec);
  return !ec;
}

std::shared_ptr<ssl::context> make_tls_context(const TlsOptions& options) {
  auto context = std::make_shared<ssl::context>(ssl::context::tls_client);
  if (SSL_CTX_set_min_proto_version(context->native_handle(), TLS1_2_VERSION) != 1) {
    throw_tls_setup_error("cannot require TLS 1.2");
  }
  context->set_options(ssl::context::default_workarounds | ssl::context::no_compression);
  load_trust_store(*context, options);
  context->set_verify_mode(options.verify_peer ? ssl::verify_peer : ssl::verify_none);
  return context;
}

void prepare_tls_stream(TlsStream& stream, const std::string& host, bool verify_peer) {
  const std::string name = host_without_brackets(host);
  const bool ip_literal = is_ip_literal(name);
  SSL* ssl = stream.native_handle();
  if (!ip_literal && SSL_set_tlsext_host_name(ssl, name.c_str()) != 1) throw_tls_setup_error("cannot set SNI");
  if (!verify_peer) {
    stream.set_verify_mode(ssl::verify_none);
    return;
  }
  stream.set_verify_mode(ssl::verify_peer);
  require_host_match(ssl, name, ip_literal);
}

std::string describe_tls_error(const boost::system::error_code& ec, const SSL* ssl) {
  if (ec == ssl::error::stream_truncated) return "the peer closed the TLS connection without close_notify";
  if (!is_verify_failure(ec)) {
    if (ec.category() != boost::asio::error::get_ssl_category()) return ec.message();
    // Asio's text is "<reason> (<library>)"; the reason alone reads better.
    const char* reason = ERR_reason_error_string(static_cast<unsigned long>(ec.value()));
    return reason != nullptr ? std::string(reason) : ec.message();
  }
  std::string text = "certificate verify failed";
  if (ssl != nullptr) {
    const long result = SSL_get_verify_result(ssl);
    if (result != X509_V_OK) text += std::string(": ") + X509_verify_cert_error_string(result);
  }
  return text;
}

std::string describe_tls_error(const boost::system::error_code& ec, TlsStream& stream) {
  return describe_tls_error(ec, stream.native_handle());
}

}  // namespace tinker::http
