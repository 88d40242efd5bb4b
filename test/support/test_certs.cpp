#include "support/test_certs.hpp"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <vector>

namespace tinker::test {
namespace {

struct KeyFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
struct CertFree {
  void operator()(X509* p) const { X509_free(p); }
};
struct BioFree {
  void operator()(BIO* p) const { BIO_free(p); }
};
struct ExtFree {
  void operator()(X509_EXTENSION* p) const { X509_EXTENSION_free(p); }
};
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;
using Cert = std::unique_ptr<X509, CertFree>;
using Bio = std::unique_ptr<BIO, BioFree>;
using Ext = std::unique_ptr<X509_EXTENSION, ExtFree>;

void check(bool ok, const char* what) {
  if (ok) return;
  char buffer[256] = {};
  ERR_error_string_n(ERR_get_error(), buffer, sizeof buffer);
  ERR_clear_error();
  throw std::runtime_error(std::string("test certificates: ") + what + ": " + buffer);
}

Key make_key() {
  Key key(EVP_EC_gen("P-256"));
  check(key != nullptr, "EVP_EC_gen");
  return key;
}

void set_name(X509* cert, const char* common_name) {
  X509_NAME* name = X509_get_subject_name(cert);
  check(X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("tinker-cpp tests"),
                                   -1, -1, 0) == 1,
        "subject O");
  check(X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(common_name), -1,
                                   -1, 0) == 1,
        "subject CN");
}

// Version 3, random serial, valid from an hour ago (clock skew between processes is not an
// issue, but certificates made "now" can look not-yet-valid at second granularity) to a day on.
Cert new_cert(EVP_PKEY* key, const char* common_name) {
  Cert cert(X509_new());
  check(cert != nullptr, "X509_new");
  check(X509_set_version(cert.get(), 2) == 1, "version");
  unsigned char serial[16];
  check(RAND_bytes(serial, sizeof serial) == 1, "serial");
  serial[0] &= 0x7f;  // positive
  std::unique_ptr<BIGNUM, decltype(&BN_free)> bn(BN_bin2bn(serial, sizeof serial, nullptr), &BN_free);
  check(bn != nullptr && BN_to_ASN1_INTEGER(bn.get(), X509_get_serialNumber(cert.get())) != nullptr, "serial");
  check(X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600) != nullptr, "notBefore");
  check(X509_gmtime_adj(X509_getm_notAfter(cert.get()), 24 * 3600) != nullptr, "notAfter");
  check(X509_set_pubkey(cert.get(), key) == 1, "public key");
  set_name(cert.get(), common_name);
  return cert;
}

void add_ext(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  Ext ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str()));
  check(ext != nullptr, "extension");
  check(X509_add_ext(cert, ext.get(), -1) == 1, "add extension");
}

std::string subject_alt_names(const std::vector<std::string>& dns_names, const std::vector<std::string>& ips) {
  std::string san;
  for (const auto& name : dns_names) san += (san.empty() ? "DNS:" : ",DNS:") + name;
  for (const auto& ip : ips) san += (san.empty() ? "IP:" : ",IP:") + ip;
  return san;
}

std::string to_pem(X509* cert) {
  Bio bio(BIO_new(BIO_s_mem()));
  check(bio != nullptr && PEM_write_bio_X509(bio.get(), cert) == 1, "PEM certificate");
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(size));
}

std::string to_pem(EVP_PKEY* key) {
  Bio bio(BIO_new(BIO_s_mem()));
  check(bio != nullptr && PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) == 1,
        "PEM key");
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(size));
}

}  // namespace

TestCertificates make_test_certificates(const std::vector<std::string>& dns_names,
                                        const std::vector<std::string>& ip_addresses) {
  Key ca_key = make_key();
  Cert ca = new_cert(ca_key.get(), "tinker-cpp test CA");
  check(X509_set_issuer_name(ca.get(), X509_get_subject_name(ca.get())) == 1, "CA issuer");
  add_ext(ca.get(), ca.get(), NID_basic_constraints, "critical,CA:TRUE");
  add_ext(ca.get(), ca.get(), NID_key_usage, "critical,keyCertSign,cRLSign");
  add_ext(ca.get(), ca.get(), NID_subject_key_identifier, "hash");
  check(X509_sign(ca.get(), ca_key.get(), EVP_sha256()) > 0, "sign CA");

  Key leaf_key = make_key();
  const std::string common_name = dns_names.empty() ? "tinker-cpp test server" : dns_names.front();
  Cert leaf = new_cert(leaf_key.get(), common_name.c_str());
  check(X509_set_issuer_name(leaf.get(), X509_get_subject_name(ca.get())) == 1, "leaf issuer");
  add_ext(leaf.get(), ca.get(), NID_basic_constraints, "critical,CA:FALSE");
  add_ext(leaf.get(), ca.get(), NID_key_usage, "critical,digitalSignature");
  add_ext(leaf.get(), ca.get(), NID_ext_key_usage, "serverAuth");
  add_ext(leaf.get(), ca.get(), NID_authority_key_identifier, "keyid:always");
  const std::string san = subject_alt_names(dns_names, ip_addresses);
  if (!san.empty()) add_ext(leaf.get(), ca.get(), NID_subject_alt_name, san);
  check(X509_sign(leaf.get(), ca_key.get(), EVP_sha256()) > 0, "sign leaf");

  TestCertificates out;
  out.ca_cert_pem = to_pem(ca.get());
  out.leaf_cert_pem = to_pem(leaf.get());
  out.leaf_key_pem = to_pem(leaf_key.get());
  return out;
}

}  // namespace tinker::test
