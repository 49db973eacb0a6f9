// A serving certificate's expiry, for the operator's alert before it lapses
// (tools/monitoring/rules.yml, GpuaasCertificateExpiresSoon). Server::Start sets
//
//   gpuaas_tls_certificate_not_after_seconds   gauge, the serving certificate's notAfter in
//                                              seconds since the epoch (TLS servers only)
//
// from the certificate file it serves; a renewed file takes effect, and shows, at the restart.
#pragma once

#include <prometheus/registry.h>

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace gpuaas::rpc {

// The notAfter of the first certificate in `pem`. INVALID_ARGUMENT when `pem` holds no
// certificate or its time cannot be read. Never blocks.
absl::StatusOr<absl::Time> CertificateNotAfter(std::string_view pem);

// Reads `cert_file` and adds the gauge above to `registry`. FAILED_PRECONDITION when the file
// cannot be read, INVALID_ARGUMENT as CertificateNotAfter. Blocks on file I/O.
absl::Status ExportCertificateExpiry(const std::string& cert_file, prometheus::Registry& registry);

}  // namespace gpuaas::rpc
