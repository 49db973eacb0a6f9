#include "services/storage/local/md5.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace gpuaas::storage::local {

Md5::Md5() : ctx_(EVP_MD_CTX_new()) {
  // Only an allocation failure can make these fail; there is no sensible way on.
  if (ctx_ == nullptr || EVP_DigestInit_ex(ctx_.get(), EVP_md5(), nullptr) != 1) {
    std::abort();
  }
}

void Md5::Update(std::string_view data) {
  if (EVP_DigestUpdate(ctx_.get(), data.data(), data.size()) != 1) {
    std::abort();
  }
}

std::string Md5::Digest() const {
  std::unique_ptr<EVP_MD_CTX, CtxFree> copy(EVP_MD_CTX_new());
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (copy == nullptr || EVP_MD_CTX_copy_ex(copy.get(), ctx_.get()) != 1 ||
      EVP_DigestFinal_ex(copy.get(), out, &size) != 1) {
    std::abort();
  }
  return std::string(reinterpret_cast<const char*>(out), size);
}

std::string ToHex(std::string_view raw) {
  constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(raw.size() * 2);
  for (unsigned char c : raw) {
    hex.push_back(kDigits[c >> 4]);
    hex.push_back(kDigits[c & 0xf]);
  }
  return hex;
}

std::string MultipartEtag(const std::vector<std::string>& part_md5s) {
  Md5 md5;
  for (const std::string& part : part_md5s) {
    md5.Update(part);
  }
  return absl::StrCat(ToHex(md5.Digest()), "-", part_md5s.size());
}

}  // namespace gpuaas::storage::local
