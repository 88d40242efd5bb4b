// Certificates made at test time: a self-signed CA and a server certificate it signed (P-256,
// SHA-256, valid from an hour ago to a day from now), so no key material is checked in and
// nothing expires.
#pragma once

#include "support/temp_files.hpp"

#include <string>
#include <vector>

namespace tinker::test {

class TestCertificates {
 public:
  TestCertificates() = default;

  std::string ca_cert_pem;    ///< the CA a client must trust
  std::string leaf_cert_pem;  ///< the server certificate, signed by the CA
  std::string leaf_key_pem;   ///< the server certificate's private key (PKCS#8)
};

/// A CA and a leaf certificate whose SubjectAltName lists `dns_names` and `ip_addresses`
/// (e.g. {"localhost"} and {"127.0.0.1", "::1"}). Throws std::runtime_error if OpenSSL fails.
TestCertificates make_test_certificates(const std::vector<std::string>& dns_names,
                                        const std::vector<std::string>& ip_addresses);

}  // namespace tinker::test
