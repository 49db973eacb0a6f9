#include "libs/rpc/cert_expiry.h"

#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <prometheus/gauge.h>

#include <ctime>
#include <memory>

#include "libs/common/files.h"

namespace gpuaas::rpc {
namespace {

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};

}  // namespace

absl::StatusOr<absl::Time> CertificateNotAfter(std::string_view pem) {
  std::unique_ptr<BIO, BioFree> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (bio == nullptr) return absl::InvalidArgumentError("certificate: cannot read the PEM");
  std::unique_ptr<X509, X509Free> cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (cert == nullptr) return absl::InvalidArgumentError("certificate: no PEM certificate");
  std::tm tm{};
  if (ASN1_TIME_to_tm(X509_get0_notAfter(cert.get()), &tm) != 1) {
    return absl::InvalidArgumentError("certificate: unreadable notAfter");
  }
  return absl::FromUnixSeconds(timegm(&tm));
}

absl::Status ExportCertificateExpiry(const std::string& cert_file, prometheus::Registry& registry) {
  absl::StatusOr<std::string> pem = ReadNonEmptyFile(cert_file);
  if (!pem.ok()) return absl::FailedPreconditionError(pem.status().message());
  absl::StatusOr<absl::Time> not_after = CertificateNotAfter(*pem);
  if (!not_after.ok()) return not_after.status();
  prometheus::BuildGauge()
      .Name("gpuaas_tls_certificate_not_after_seconds")
      .Help("The serving certificate's notAfter, in seconds since the epoch")
      .Register(registry)
      .Add({})
      .Set(static_cast<double>(absl::ToUnixSeconds(*not_after)));
  return absl::OkStatus();
}

}  // namespace gpuaas::rpc
