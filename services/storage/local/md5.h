// MD5 through OpenSSL's EVP interface: S3 ETags and Content-MD5 are MD5, so this is about
// compatibility, not security.
#pragma once

#include <openssl/evp.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace gpuaas::storage::local {

class Md5 final {
 public:
  Md5();
  void Update(std::string_view data);
  // The digest of everything so far (16 raw bytes); the hash can go on afterwards.
  std::string Digest() const;

 private:
  struct CtxFree {
    void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
  };
  std::unique_ptr<EVP_MD_CTX, CtxFree> ctx_;
};

// Lowercase hex of raw bytes.
std::string ToHex(std::string_view raw);

// A multipart object's ETag as S3 makes it: the MD5 of the parts' raw MD5s, "-", their count.
std::string MultipartEtag(const std::vector<std::string>& part_md5s);

}  // namespace gpuaas::storage::local
