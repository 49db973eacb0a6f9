#include "services/auth/credentials/secret_hash.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <cstdlib>

namespace gpuaas::auth {

std::string HashSecret(std::string_view secret) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(secret.data(), secret.size(), digest, &len, EVP_sha256(), nullptr) != 1) {
    std::abort();  // SHA-256 cannot fail on valid memory; OpenSSL is broken
  }
  constexpr std::string_view kHex = "0123456789abcdef";
  std::string out;
  out.reserve(len * 2);
  for (unsigned int i = 0; i < len; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 0xf]);
  }
  return out;
}

bool VerifySecret(std::string_view secret, std::string_view stored_hash) {
  const std::string got = HashSecret(secret);
  if (stored_hash.size() != got.size()) {
    return false;
  }
  return CRYPTO_memcmp(got.data(), stored_hash.data(), got.size()) == 0;
}

}  // namespace gpuaas::auth
