// OCI image references as the image catalog takes them: "[host[:port]/]repo[:tag]" or
// "[host[:port]/]repo@sha256:<64 hex>", the docker/distribution grammar's common subset. Names
// without a host are Docker Hub's, as docker and skopeo read them ("debian" is
// "docker.io/library/debian"). Pure.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace gpuaas::instance {

struct OciReference {
  // "docker.io", "127.0.0.1:5000", "ghcr.io".
  std::string host;
  // "library/debian", "gpuaas/jupyter".
  std::string repository;
  // "latest" when neither tag nor digest is given; empty with a digest.
  std::string tag;
  // "sha256:<64 hex>", or empty.
  std::string digest;

  // "host/repository@digest" (with a digest), else "host/repository:tag".
  std::string ToString() const;
  // The same repository at `digest`: "host/repository@<digest>".
  std::string PinnedTo(std::string_view digest) const;
};

// Parses `text`. Errors: INVALID_ARGUMENT naming `field`.
absl::StatusOr<OciReference> ParseOciReference(std::string_view field, std::string_view text);

// A registry on the node's own loopback (localhost, 127.0.0.0/8, [::1]), reached without TLS.
bool IsLoopbackRegistry(std::string_view host);

}  // namespace gpuaas::instance
