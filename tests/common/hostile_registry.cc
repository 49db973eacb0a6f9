#include "tests/common/hostile_registry.h"

#include <netinet/in.h>
#include <openssl/evp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace gpuaas::testing {
namespace {

namespace fs = std::filesystem;

std::string Sha256Hex(const std::string& bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr);
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<char*>(digest), length));
}

}  // namespace

HostileRegistry::HostileRegistry(const fs::path& dir, int port) : dir_(dir), port_(port) {
  for (const char* sub : {"manifests", "blobs", "refused", "slow"}) {
    fs::create_directories(dir_ / sub);
  }
  if (port_ == 0) port_ = FreePort();
  process_ = std::make_unique<ChildProcess>(
      std::vector<std::string>{"/usr/bin/python3", GPUAAS_HOSTILE_REGISTRY, std::to_string(port_),
                               dir_.string()},
      (dir_ / "log").string());
}

std::string HostileRegistry::host() const { return absl::StrCat("127.0.0.1:", port_); }

bool HostileRegistry::Answers() const {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{.sin_family = AF_INET,
                   .sin_port = htons(static_cast<uint16_t>(port_)),
                   .sin_addr = {htonl(INADDR_LOOPBACK)}};
  const bool answers = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return answers;
}

std::string HostileRegistry::Blob(const std::string& bytes) {
  const std::string hex = Sha256Hex(bytes);
  std::ofstream(dir_ / "blobs" / ("sha256:" + hex), std::ios::binary) << bytes;
  return hex;
}

int64_t HostileRegistry::BlobFile(const std::string& hex, const fs::path& from) {
  fs::copy_file(from, dir_ / "blobs" / ("sha256:" + hex), fs::copy_options::overwrite_existing);
  return static_cast<int64_t>(fs::file_size(from));
}

void HostileRegistry::Refuse(const std::string& hex) {
  std::ofstream(dir_ / "refused" / ("sha256:" + hex));
}

void HostileRegistry::Slow(const std::string& hex) {
  std::ofstream(dir_ / "slow" / ("sha256:" + hex));
}

std::string HostileRegistry::Manifest(const std::string& repository, const std::string& bytes,
                                      const std::string& type) {
  const std::string name = "sha256:" + Sha256Hex(bytes);
  std::ofstream(dir_ / "manifests" / name, std::ios::binary) << bytes;
  std::ofstream(dir_ / "manifests" / (name + ".type")) << type;
  return absl::StrCat(host(), "/", repository, "@", name);
}

std::string HostileRegistry::Image(const std::string& repository, const std::vector<Layer>& layers,
                                   const std::string& config) {
  nlohmann::json manifest = {{"schemaVersion", 2},
                             {"mediaType", kManifestType},
                             {"config",
                              {{"mediaType", "application/vnd.oci.image.config.v1+json"},
                               {"digest", "sha256:" + Blob(config)},
                               {"size", config.size()}}},
                             {"layers", nlohmann::json::array()}};
  for (const Layer& layer : layers) {
    manifest["layers"].push_back({{"mediaType", "application/vnd.oci.image.layer.v1.tar+gzip"},
                                  {"digest", "sha256:" + layer.hex},
                                  {"size", layer.size}});
  }
  return Manifest(repository, manifest.dump());
}

std::string HostileRegistry::DeepIndex(int depth) {
  return absl::StrCat(R"({"schemaVersion":2,"mediaType":")", kIndexType,
                      R"(","manifests":[{"mediaType":")", kManifestType, R"(","digest":"sha256:)",
                      std::string(64, '0'), R"(","size":2,"platform":)", std::string(depth, '['),
                      std::string(depth, ']'), "}]}");
}

std::string HostileRegistry::Requests() const {
  std::ifstream in(dir_ / "requests");
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace gpuaas::testing
