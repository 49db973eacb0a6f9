// skopeo speaks the registry protocol for the image store (auth, TLS, manifest lists) and
// verifies every blob's digest as it copies.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace gpuaas::agent {

struct RegistryLogin {
  std::string username, password;
};

struct SkopeoOptions {
  std::string skopeo_path;
  std::string private_dir;  // 0700, removed by the caller: the auth file, skopeo's temp files
  std::string auth_file;    // from WriteAuthFile; empty: anonymous
  bool tls_verify = true;
  absl::Duration timeout = absl::InfiniteDuration();  // the whole command's
};

// Writes `login` for the reference's registry into `private_dir`/auth.json (0600,
// containers-auth.json(5)) and returns its path: skopeo gets the login in this file, never on
// its command line (which every user can read), and it is never logged. Error: INTERNAL.
absl::StatusOr<std::string> WriteAuthFile(const std::string& private_dir,
                                          absl::string_view reference, const RegistryLogin& login);

// The manifest (or manifest list) that `reference` ("host[:port]/path@sha256:<hex>") names,
// as the registry serves it. Blocks. Errors by code (SkopeoFailure).
absl::StatusOr<std::string> SkopeoInspectRaw(const SkopeoOptions& options,
                                             const std::string& reference);

// Runs `skopeo copy` of `reference` for linux/amd64 into the OCI layout `layout_dir` (fresh for
// this copy: its index.json names the image), its blobs in `shared_blob_dir`, where blobs
// already there are not downloaded again; each blob lands there (renamed into place) once
// complete and verified. Blocks. Errors by code (SkopeoFailure).
absl::Status SkopeoCopy(const SkopeoOptions& options, const std::string& reference,
                        const std::string& layout_dir, const std::string& shared_blob_dir);

// The typed error for skopeo's stderr: NOT_FOUND "image not found: ...", PERMISSION_DENIED
// "unauthorized: ...", DATA_LOSS "digest mismatch: ...", RESOURCE_EXHAUSTED "no space: ...",
// UNAVAILABLE "registry unreachable: ...", else UNKNOWN; each names the reference and ends with
// skopeo's own last line.
absl::Status SkopeoFailure(absl::string_view reference, absl::string_view stderr_text);

}  // namespace gpuaas::agent
