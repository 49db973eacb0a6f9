#include "services/storage/s3/checksum.h"

#include <openssl/evp.h>

#include <array>
#include <cstdint>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "services/storage/s3/internal/views.h"

namespace gpuaas::storage::s3 {
namespace {

// Reflected CRC-32 with a byte table: 0xEDB88320 is CRC-32 (zlib), 0x82F63B78 CRC-32C.
class Crc32 final : public PayloadChecksum {
 public:
  explicit Crc32(uint32_t polynomial) {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) {
        c = (c & 1) ? polynomial ^ (c >> 1) : c >> 1;
      }
      table_[i] = c;
    }
  }
  void Update(std::string_view data) override {
    for (unsigned char byte : data) {
      crc_ = table_[(crc_ ^ byte) & 0xFF] ^ (crc_ >> 8);
    }
  }
  std::string Base64() override {
    uint32_t v = crc_ ^ 0xFFFFFFFFu;
    char bytes[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16),
                     static_cast<char>(v >> 8), static_cast<char>(v)};
    return absl::Base64Escape(absl::string_view(bytes, 4));
  }

 private:
  std::array<uint32_t, 256> table_;
  uint32_t crc_ = 0xFFFFFFFFu;
};

class Digest final : public PayloadChecksum {
 public:
  explicit Digest(const EVP_MD* md) : ctx_(EVP_MD_CTX_new()) {
    EVP_DigestInit_ex(ctx_, md, nullptr);
  }
  ~Digest() override { EVP_MD_CTX_free(ctx_); }
  void Update(std::string_view data) override { EVP_DigestUpdate(ctx_, data.data(), data.size()); }
  std::string Base64() override {
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_DigestFinal_ex(ctx_, out, &len);
    return absl::Base64Escape(absl::string_view(reinterpret_cast<char*>(out), len));
  }

 private:
  EVP_MD_CTX* ctx_;
};

}  // namespace

std::unique_ptr<PayloadChecksum> PayloadChecksum::For(std::string_view algorithm) {
  std::string name = absl::AsciiStrToLower(Av(algorithm));
  if (name == "crc32") {
    return std::make_unique<Crc32>(0xEDB88320u);
  }
  if (name == "crc32c") {
    return std::make_unique<Crc32>(0x82F63B78u);
  }
  if (name == "sha1") {
    return std::make_unique<Digest>(EVP_sha1());
  }
  if (name == "sha256") {
    return std::make_unique<Digest>(EVP_sha256());
  }
  return nullptr;
}

}  // namespace gpuaas::storage::s3
