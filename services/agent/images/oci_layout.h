// Reads the image that one `skopeo copy` wrote into an OCI layout: its manifest (as stored, which
// skopeo may have converted from Docker's format, keeping the layer blobs), config and layers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gpuaas::agent {

struct OciLayer {
  std::string hex;  // the blob's sha256
  int64_t size = 0;
};

// An image manifest's config and layers, or, for a manifest list, the linux/amd64 manifest.
struct ManifestLayers {
  std::string platform_manifest_hex;  // set only for a manifest list
  std::string config_hex;
  std::vector<OciLayer> layers;  // bottom first
};

// Errors: INVALID_ARGUMENT for a malformed manifest or an unsupported layer media type (foreign
// or encrypted layers); NOT_FOUND for a list without linux/amd64.
absl::StatusOr<ManifestLayers> ParseManifest(const std::string& manifest_text);

struct OciImage {
  std::string manifest_hex;  // of the stored manifest
  std::string config_hex;
  std::string config_json;
  std::vector<OciLayer> layers;  // bottom first
};

// `layout_dir`'s index.json names one manifest; blobs are read from `blob_dir`/sha256.
// Errors: as ParseManifest, INVALID_ARGUMENT for a malformed layout, NOT_FOUND for a missing blob.
absl::StatusOr<OciImage> ReadOciLayout(const std::string& layout_dir, const std::string& blob_dir);

}  // namespace gpuaas::agent
