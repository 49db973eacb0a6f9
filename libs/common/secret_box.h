// Sealing secrets at rest that the server must read back in plain text, so they cannot be
// hashed like a password: storage accessors' S3 secret keys (SigV4 needs them) and images'
// registry passwords (the agents log in with them). The table holds each sealed with
// AES-256-GCM under a 32-byte key that lives in a file outside the database
// (--secret-key-file), so a database dump alone reveals no secret. Each secret gets a fresh
// random 96-bit nonce, and the owner's identity (an accessor's access_key_id, an image's or
// instance's name) is bound in as additional authenticated data, so a sealed secret copied
// onto another row does not open.
//
// Sealed form: nonce (12 bytes) || ciphertext || tag (16 bytes). Thread-safe; nothing blocks
// except FromKeyFile.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace gpuaas {

class SecretBox final {
 public:
  static constexpr size_t kKeyBytes = 32;
  static constexpr size_t kNonceBytes = 12;
  static constexpr size_t kTagBytes = 16;

  // `key` must be exactly kKeyBytes raw bytes. Error: INVALID_ARGUMENT.
  static absl::StatusOr<SecretBox> FromKey(std::string key);

  // Reads the key from `path`: exactly 32 bytes (`head -c 32 /dev/urandom`). Blocks on disk.
  // Errors: FAILED_PRECONDITION naming the file when it cannot be read or holds another size.
  static absl::StatusOr<SecretBox> FromKeyFile(const std::string& path);

  // Seals `plaintext` bound to `aad`. Error: INTERNAL when OpenSSL fails.
  absl::StatusOr<std::string> Seal(std::string_view plaintext, std::string_view aad) const;

  // Opens what Seal made with the same key and `aad`. Error: DATA_LOSS when the sealed bytes
  // were changed, sealed under another key or for another `aad` (nothing is returned then).
  absl::StatusOr<std::string> Open(std::string_view sealed, std::string_view aad) const;

 private:
  explicit SecretBox(std::string key) : key_(std::move(key)) {}

  std::string key_;
};

}  // namespace gpuaas
