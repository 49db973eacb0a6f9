// Pinning an image's OCI reference to a digest when it is registered, so instances run the
// same bytes on every start whatever its tag points to later.
//
// ImagePinner is the seam (tests may fake it); SkopeoPinner asks the registry with
// `skopeo inspect --raw` (the manifest, or index, the tag names) and pins to the sha256 of those
// bytes, the digest the registry serves them under. A registry login goes to skopeo in a 0600
// auth file in a private temporary directory, removed at once: never on a command line, in the
// environment or in a log.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "gpuaas/instance/v1/instance.pb.h"

namespace gpuaas::instance {

namespace pb = ::gpuaas::instance::v1;

class ImagePinner {
 public:
  virtual ~ImagePinner() = default;

  // `reference` (image.oci_reference) by digest: "host/repo@sha256:<hex>"; a reference by
  // digest comes back as it is (normalized), without asking the registry. `credentials` may
  // be empty. Blocks on the registry. Errors: INVALID_ARGUMENT naming image.oci_reference (a
  // bad reference) or registry_credentials (refused); NOT_FOUND naming image.oci_reference (no
  // such repository or tag); UNAVAILABLE when the registry cannot be reached or fails.
  virtual absl::StatusOr<std::string> Pin(const std::string& reference,
                                          const pb::RegistryCredentials& credentials) = 0;
};
using ImagePinnerPtr = std::unique_ptr<ImagePinner>;

struct SkopeoPinnerOptions {
  // The skopeo binary.
  std::string skopeo = "skopeo";
  // Registries ("host[:port]") reached over plain HTTP or unverified TLS besides those on the
  // loopback, which always are.
  std::vector<std::string> insecure_registries;
  // skopeo's whole inspect.
  absl::Duration timeout = absl::Seconds(30);
};

// Thread-safe: each Pin runs its own skopeo.
ImagePinnerPtr NewSkopeoPinner(SkopeoPinnerOptions options);

}  // namespace gpuaas::instance
