// Test helper: Debian's docker-registry serving on a free loopback port, storage in a temporary
// directory, optionally behind htpasswd basic auth; and images built with umoci from layer tars
// and pushed there with skopeo. The registry's access log tells what was downloaded.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "services/agent/images/image_record.h"
#include "services/agent/images/skopeo_copy.h"

namespace gpuaas::agent::testing {

class TestRegistry final {
 public:
  // Starts the registry with its files under `dir` and waits until it answers. With `login`,
  // every request needs that user and password (a bcrypt htpasswd file). Blocks.
  static absl::StatusOr<std::unique_ptr<TestRegistry>> Start(
      const std::string& dir, std::optional<RegistryLogin> login = std::nullopt);
  ~TestRegistry();  // stops the registry
  TestRegistry(const TestRegistry&) = delete;
  TestRegistry& operator=(const TestRegistry&) = delete;

  const std::string& host() const { return host_; }  // "127.0.0.1:<port>"
  // Where the registry keeps the blob with this sha256 hex (to corrupt it).
  std::string BlobDataPath(const std::string& hex) const;
  // GET requests for blobs served so far (the access log).
  int BlobDownloads() const;

 private:
  TestRegistry() = default;

  std::string dir_, host_;
  pid_t pid_ = -1;
};

struct TestImage {
  std::vector<std::string> layer_tars;  // uncompressed, bottom first (umoci gzips them)
  ImageConfig config;
};

// Builds `image` in an OCI layout under `work_dir` with umoci, pushes it to
// `registry`/`repository`:latest with skopeo and returns its pinned reference
// "host/repository@sha256:...". Blocks.
absl::StatusOr<std::string> PushImage(const TestRegistry& registry, const std::string& repository,
                                      const TestImage& image, const std::string& work_dir,
                                      const RegistryLogin* login = nullptr);

struct PlatformImage {
  std::string architecture;  // "amd64", "arm64": linux/<architecture>
  TestImage image;
};

// As PushImage, for a manifest list (an OCI index) of `images`; returns the list's reference.
absl::StatusOr<std::string> PushImageList(const TestRegistry& registry,
                                          const std::string& repository,
                                          const std::vector<PlatformImage>& images,
                                          const std::string& work_dir);

}  // namespace gpuaas::agent::testing
