// A tenant's own registry for the attack tests: tests/registry_fixture/hostile_registry.py on a
// free loopback port, serving the manifests and blobs a test writes into its directory, refusing
// or trickling the blobs it is told to, and logging every request.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "tests/common/child_process.h"

namespace gpuaas::testing {

class HostileRegistry final {
 public:
  static constexpr char kManifestType[] = "application/vnd.oci.image.manifest.v1+json";
  static constexpr char kIndexType[] = "application/vnd.oci.image.index.v1+json";

  // Starts the registry with its files under `dir`, on `port` (0: a free one, which a platform
  // started earlier has not allowed); Answers() tells when it listens.
  explicit HostileRegistry(const std::filesystem::path& dir, int port = 0);

  std::string host() const;  // "127.0.0.1:<port>"
  bool Answers() const;
  // Serves `bytes` as a blob; returns its sha256 hex.
  std::string Blob(const std::string& bytes);
  // Serves the file `from` as the blob `hex` (a blob of another registry); returns its size.
  int64_t BlobFile(const std::string& hex, const std::filesystem::path& from);
  // Answers a request for the blob `hex` 403 DENIED: this registry does not serve it.
  void Refuse(const std::string& hex);
  // Sends the blob `hex` a 64 KiB piece every 0.2 s.
  void Slow(const std::string& hex);
  // Serves `bytes` as a manifest (or index) of media type `type` under their digest; returns
  // the pinned reference "<host>/<repository>@sha256:<hex>".
  std::string Manifest(const std::string& repository, const std::string& bytes,
                       const std::string& type = kManifestType);
  // An image manifest listing `layers` (gzip tars: hex and size) and a config blob `config`;
  // returns its pinned reference.
  struct Layer {
    std::string hex;
    int64_t size = 0;
  };
  std::string Image(const std::string& repository, const std::vector<Layer>& layers,
                    const std::string& config =
                        R"({"architecture":"amd64","os":"linux","config":{"Cmd":["/bin/sh"]}})");
  // An OCI index whose one entry's platform is an array nested `depth` deep (2 × depth bytes):
  // what overflowed the agent's stack when it copied the parsed tree.
  static std::string DeepIndex(int depth);
  // Every request so far, "METHOD PATH" a line.
  std::string Requests() const;

 private:
  std::filesystem::path dir_;
  int port_ = 0;
  std::unique_ptr<ChildProcess> process_;
};

}  // namespace gpuaas::testing
