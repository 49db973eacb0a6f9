// Copies an image from a registry into the store's OCI layout with skopeo, which speaks the
// registry protocol (auth, TLS, manifest lists) and verifies every blob's digest as it copies.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace gpuaas::agent {

struct RegistryLogin {
  std::string username, password;
};

struct SkopeoCopyRequest {
  std::string skopeo_path;
  std::string reference;        // "host[:port]/path@sha256:<hex>"
  std::string layout_dir;       // a fresh OCI layout for this copy: its index.json names the image
  std::string shared_blob_dir;  // the store's blobs; those already there are not downloaded
  std::string private_dir;  // 0700, removed by the caller: the auth file and skopeo's temp files
  const RegistryLogin* login = nullptr;  // nullptr: anonymous
  bool tls_verify = true;
};

// Runs `skopeo copy` for linux/amd64 and waits for it. The login goes to skopeo in a 0600 auth
// file in `private_dir`, never on its command line (which every user can read) and never in a
// log. Errors by code (SkopeoFailure).
absl::Status SkopeoCopy(const SkopeoCopyRequest& request);

// The typed error for skopeo's stderr: NOT_FOUND "image not found: ...", PERMISSION_DENIED
// "unauthorized: ...", DATA_LOSS "digest mismatch: ...", RESOURCE_EXHAUSTED "no space: ...",
// UNAVAILABLE "registry unreachable: ...", else UNKNOWN; each names the reference and ends with
// skopeo's own last line.
absl::Status SkopeoFailure(absl::string_view reference, absl::string_view stderr_text);

}  // namespace gpuaas::agent
