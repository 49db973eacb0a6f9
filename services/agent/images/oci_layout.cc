#include "services/agent/images/oci_layout.h"

#include <cstdint>
#include <limits>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "libs/common/status_macros.h"
#include "nlohmann/json.hpp"
#include "services/agent/images/bounded_json.h"

namespace gpuaas::agent {
namespace {

// The layer media types whose blobs are tars, plain, gzip or zstd (OCI and Docker names).
const std::set<absl::string_view>& TarLayerTypes() {
  static const auto* types = new std::set<absl::string_view>{
      "application/vnd.oci.image.layer.v1.tar",
      "application/vnd.oci.image.layer.v1.tar+gzip",
      "application/vnd.oci.image.layer.v1.tar+zstd",
      "application/vnd.docker.image.rootfs.diff.tar.gzip",
      "application/vnd.docker.image.rootfs.diff.tar",
  };
  return *types;
}

constexpr uint64_t kMaxLayerBytesTotal = std::numeric_limits<int64_t>::max();

absl::StatusOr<std::string> DigestHex(const nlohmann::json& descriptor) {
  const std::string digest = descriptor.at("digest").get<std::string>();
  absl::string_view hex = digest;
  if (!absl::ConsumePrefix(&hex, "sha256:") || hex.size() != 64 ||
      hex.find_first_not_of("0123456789abcdef") != absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat("unsupported digest ", digest));
  }
  return std::string(hex);
}

}  // namespace

absl::StatusOr<ManifestLayers> ParseManifest(const std::string& manifest_text) {
  GPUAAS_ASSIGN_OR_RETURN(const nlohmann::json manifest,
                          ParseBoundedJson(manifest_text, "image manifest", kMaxManifestBytes));
  try {
    ManifestLayers out;
    if (manifest.contains("manifests")) {  // an OCI index or a Docker manifest list
      const nlohmann::json& manifests = manifest.at("manifests");
      if (manifests.size() > kMaxDescriptors) {
        return absl::InvalidArgumentError(
            absl::StrCat("image index: more than ", kMaxDescriptors, " manifests"));
      }
      for (const nlohmann::json& entry : manifests) {
        const auto platform = entry.find("platform");
        if (platform != entry.end() && platform->is_object() &&
            platform->value("os", "") == "linux" &&
            platform->value("architecture", "") == "amd64") {
          GPUAAS_ASSIGN_OR_RETURN(out.platform_manifest_hex, DigestHex(entry));
          return out;
        }
      }
      return absl::NotFoundError("image not found: no linux/amd64 image in the manifest list");
    }
    GPUAAS_ASSIGN_OR_RETURN(out.config_hex, DigestHex(manifest.at("config")));
    if (manifest.at("layers").size() > kMaxDescriptors) {
      return absl::InvalidArgumentError(
          absl::StrCat("image manifest: more than ", kMaxDescriptors, " layers"));
    }
    uint64_t total = 0;
    for (const nlohmann::json& layer : manifest.at("layers")) {
      const std::string media_type = layer.at("mediaType").get<std::string>();
      if (!TarLayerTypes().contains(media_type)) {
        return absl::InvalidArgumentError(absl::StrCat("unsupported layer type ", media_type));
      }
      GPUAAS_ASSIGN_OR_RETURN(std::string hex, DigestHex(layer));
      // A whole number of bytes, and all of them together an int64 (the pull's progress adds
      // them up): 1e300 converts to int64 with undefined behaviour, 2^64-1 to -1.
      const nlohmann::json& size = layer.at("size");
      if (!size.is_number_unsigned() || size.get<uint64_t>() > kMaxLayerBytesTotal - total) {
        return absl::InvalidArgumentError(
            absl::StrCat("layer ", hex, ": size must be a whole number of bytes below 2^63"));
      }
      total += size.get<uint64_t>();
      out.layers.push_back({.hex = std::move(hex), .size = size.get<int64_t>()});
    }
    return out;
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("malformed image manifest: ", e.what()));
  }
}

absl::StatusOr<OciImage> ReadOciLayout(const std::string& layout_dir, const std::string& blob_dir) {
  std::string manifest_hex;
  try {
    GPUAAS_ASSIGN_OR_RETURN(
        const std::string index_text,
        ReadBoundedFile(layout_dir + "/index.json", "OCI layout index", kMaxManifestBytes));
    GPUAAS_ASSIGN_OR_RETURN(const nlohmann::json index,
                            ParseBoundedJson(index_text, "OCI layout index", kMaxManifestBytes));
    const nlohmann::json& manifests = index.at("manifests");
    if (manifests.size() != 1) {
      return absl::InvalidArgumentError("the pulled layout holds more than one manifest");
    }
    GPUAAS_ASSIGN_OR_RETURN(manifest_hex, DigestHex(manifests[0]));
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("malformed OCI layout: ", e.what()));
  }
  GPUAAS_ASSIGN_OR_RETURN(
      const std::string manifest_text,
      ReadBoundedFile(blob_dir + "/sha256/" + manifest_hex, "image manifest", kMaxManifestBytes));
  GPUAAS_ASSIGN_OR_RETURN(ManifestLayers manifest, ParseManifest(manifest_text));
  if (!manifest.platform_manifest_hex.empty()) {
    return absl::InvalidArgumentError("the pulled layout holds a manifest list");
  }
  OciImage image{.manifest_hex = std::move(manifest_hex),
                 .config_hex = std::move(manifest.config_hex),
                 .layers = std::move(manifest.layers)};
  GPUAAS_ASSIGN_OR_RETURN(
      image.config_json,
      ReadBoundedFile(blob_dir + "/sha256/" + image.config_hex, "image config", kMaxConfigBytes));
  return image;
}

}  // namespace gpuaas::agent
