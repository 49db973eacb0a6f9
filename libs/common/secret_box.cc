#include "libs/common/secret_box.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <memory>

#include "libs/common/files.h"

namespace gpuaas {
namespace {

using CipherCtx = std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)>;

CipherCtx NewCtx() { return CipherCtx(EVP_CIPHER_CTX_new(), &EVP_CIPHER_CTX_free); }

const unsigned char* Bytes(std::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

unsigned char* Bytes(std::string& s) { return reinterpret_cast<unsigned char*>(s.data()); }

absl::Status OpenSslFailed(std::string_view what) {
  return absl::InternalError("secret box: OpenSSL " + std::string(what) + " failed");
}

}  // namespace

absl::StatusOr<SecretBox> SecretBox::FromKey(std::string key) {
  if (key.size() != kKeyBytes) {
    return absl::InvalidArgumentError("secret key: must be exactly 32 bytes, got " +
                                      std::to_string(key.size()));
  }
  return SecretBox(std::move(key));
}

absl::StatusOr<SecretBox> SecretBox::FromKeyFile(const std::string& path) {
  absl::StatusOr<std::string> key = ReadFile(path);
  if (!key.ok()) {
    return absl::FailedPreconditionError("secret key file " + path + ": cannot be read");
  }
  if (key->size() != kKeyBytes) {
    return absl::FailedPreconditionError(
        "secret key file " + path +
        ": must hold exactly 32 bytes (head -c 32 /dev/urandom), holds " +
        std::to_string(key->size()));
  }
  return SecretBox(*std::move(key));
}

absl::StatusOr<std::string> SecretBox::Seal(std::string_view plaintext,
                                            std::string_view aad) const {
  std::string out(kNonceBytes + plaintext.size() + kTagBytes, '\0');
  unsigned char* nonce = Bytes(out);
  unsigned char* body = nonce + kNonceBytes;
  if (RAND_bytes(nonce, static_cast<int>(kNonceBytes)) != 1) return OpenSslFailed("RAND_bytes");
  CipherCtx ctx = NewCtx();
  int len = 0;
  if (!ctx || EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, Bytes(key_), nonce) != 1 ||
      EVP_EncryptUpdate(ctx.get(), nullptr, &len, Bytes(aad), static_cast<int>(aad.size())) != 1 ||
      EVP_EncryptUpdate(ctx.get(), body, &len, Bytes(plaintext),
                        static_cast<int>(plaintext.size())) != 1 ||
      EVP_EncryptFinal_ex(ctx.get(), body + len, &len) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, static_cast<int>(kTagBytes),
                          body + plaintext.size()) != 1) {
    return OpenSslFailed("AES-256-GCM encryption");
  }
  return out;
}

absl::StatusOr<std::string> SecretBox::Open(std::string_view sealed, std::string_view aad) const {
  if (sealed.size() < kNonceBytes + kTagBytes) {
    return absl::DataLossError("sealed secret: too short");
  }
  const size_t body_size = sealed.size() - kNonceBytes - kTagBytes;
  const unsigned char* nonce = Bytes(sealed);
  const unsigned char* body = nonce + kNonceBytes;
  // EVP_CTRL_GCM_SET_TAG takes a non-const pointer though it only reads.
  std::string tag(sealed.substr(kNonceBytes + body_size));
  std::string out(body_size, '\0');
  CipherCtx ctx = NewCtx();
  int len = 0;
  if (!ctx || EVP_DecryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, Bytes(key_), nonce) != 1 ||
      EVP_DecryptUpdate(ctx.get(), nullptr, &len, Bytes(aad), static_cast<int>(aad.size())) != 1 ||
      EVP_DecryptUpdate(ctx.get(), Bytes(out), &len, body, static_cast<int>(body_size)) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, static_cast<int>(kTagBytes),
                          Bytes(tag)) != 1) {
    return OpenSslFailed("AES-256-GCM decryption");
  }
  // Only the final step checks the tag; until it passes, `out` is unauthenticated.
  if (EVP_DecryptFinal_ex(ctx.get(), Bytes(out) + len, &len) != 1) {
    return absl::DataLossError("sealed secret: authentication failed (changed, or another key)");
  }
  return out;
}

}  // namespace gpuaas
