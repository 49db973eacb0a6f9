// Pinning an image's OCI reference to a digest, so instances run the same bytes on every start
// whatever its tag points to later. Runs on the image pin queue's workers (image_pin_queue.h),
// never on the threads that serve calls.
//
// ImagePinner is the seam (tests may fake it); NewRegistryPinner asks the registry itself
// (registry_fetch.h: the RegistryPolicy at every connection, short timeouts) for the manifest,
// or index, the tag names, with the registry's token or basic auth when it wants a login, and
// pins to the sha256 of those bytes, the digest the registry serves them under.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "gpuaas/instance/v1/instance.pb.h"
#include "libs/registry_policy/registry_policy.h"

namespace gpuaas::instance {

namespace pb = ::gpuaas::instance::v1;

class ImagePinner {
 public:
  virtual ~ImagePinner() = default;

  // `reference` (image.oci_reference) by digest: "host/repo@sha256:<hex>"; a reference by
  // digest comes back as it is (normalized) once its registry's address passes the policy,
  // without asking the registry. `credentials` may be empty. Blocks on DNS and the registry
  // (a few requests of at most the pinner's timeout each). Errors, each message fixed, with
  // nothing the registry sent: INVALID_ARGUMENT (a bad reference; "registry_credentials: ..."
  // when the registry refuses the login or wants one); PERMISSION_DENIED
  // registry::kNotAllowed; NOT_FOUND when the registry does not know the repository or tag;
  // UNAVAILABLE registry::kUnreachable for everything else.
  virtual absl::StatusOr<std::string> Pin(const std::string& reference,
                                          const pb::RegistryCredentials& credentials) = 0;
};
using ImagePinnerPtr = std::unique_ptr<ImagePinner>;

struct RegistryPinnerOptions {
  registry::RegistryPolicy policy;
  // Each request's (connect included).
  absl::Duration timeout = absl::Seconds(10);
};

// Thread-safe.
ImagePinnerPtr NewRegistryPinner(RegistryPinnerOptions options);

}  // namespace gpuaas::instance
