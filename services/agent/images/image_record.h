// What the store keeps about one pulled image, in images/<manifest hex>.json: its layers (by
// blob digest, bottom first), its other blobs, its config and when it was last used.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gpuaas::agent {

// From the image's config blob.
struct ImageConfig {
  std::vector<std::string> env;  // "NAME=value"
  std::vector<std::string> entrypoint, cmd;
  std::string working_dir, user;
  std::vector<int> exposed_ports;  // tcp ports from ExposedPorts
};

struct LayerRecord {
  std::string hex;  // the layer blob's sha256
  int64_t blob_bytes = 0;
  int64_t unpacked_bytes = 0;
};

struct ImageRecord {
  std::string hex;        // the registry's manifest digest (the reference's)
  std::string reference;  // as pulled
  std::vector<LayerRecord> layers;
  std::vector<std::string> other_blobs;  // the stored manifest's and the config's hex
  std::string config_json;               // the config blob
  int64_t last_used_unix_micros = 0;

  int64_t unpacked_bytes() const;
};

// The config blob's runtime settings. Error: INVALID_ARGUMENT naming what is malformed.
absl::StatusOr<ImageConfig> ParseImageConfig(const std::string& config_json);

// Writes the record atomically (temp file, rename). Errors: INTERNAL, RESOURCE_EXHAUSTED.
absl::Status WriteImageRecord(const std::string& path, const ImageRecord& record);

// Error: INVALID_ARGUMENT for a file that is not a record.
absl::StatusOr<ImageRecord> ReadImageRecord(const std::string& path);

}  // namespace gpuaas::agent
