// Ed25519 key pairs through OpenSSL 3's EVP interface (raw keys, one-shot sign and verify).
#include <openssl/evp.h>

#include <cstdlib>

#include "libs/authz/jwt.h"

namespace gpuaas::authz {
namespace {

constexpr size_t kRawKeySize = 32;
constexpr size_t kSignatureSize = 64;

struct PkeyDeleter {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
struct MdCtxDeleter {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyDeleter>;
using MdCtxPtr = std::unique_ptr<EVP_MD_CTX, MdCtxDeleter>;

// OpenSSL failing on a well-formed in-memory key means the library itself is broken; no
// caller could recover, so this crashes rather than hand out an unsigned token.
[[noreturn]] void CryptoFailure() { std::abort(); }

}  // namespace

struct Ed25519Key::Impl {
  PkeyPtr pkey;
  bool has_private = false;
};

Ed25519Key::Ed25519Key(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Ed25519Key::Ed25519Key(Ed25519Key&&) noexcept = default;
Ed25519Key& Ed25519Key::operator=(Ed25519Key&&) noexcept = default;
Ed25519Key::~Ed25519Key() = default;

Ed25519Key Ed25519Key::Generate() {
  EVP_PKEY* raw = EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519");
  if (raw == nullptr) {
    CryptoFailure();
  }
  auto impl = std::make_unique<Impl>();
  impl->pkey.reset(raw);
  impl->has_private = true;
  return Ed25519Key(std::move(impl));
}

absl::StatusOr<Ed25519Key> Ed25519Key::FromPrivateRaw(std::string_view raw32) {
  if (raw32.size() != kRawKeySize) {
    return absl::InvalidArgumentError("Ed25519 private key must be 32 bytes");
  }
  EVP_PKEY* raw = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr,
                                               reinterpret_cast<const unsigned char*>(raw32.data()),
                                               raw32.size());
  if (raw == nullptr) {
    return absl::InvalidArgumentError("invalid Ed25519 private key");
  }
  auto impl = std::make_unique<Impl>();
  impl->pkey.reset(raw);
  impl->has_private = true;
  return Ed25519Key(std::move(impl));
}

absl::StatusOr<Ed25519Key> Ed25519Key::FromPublicRaw(std::string_view raw32) {
  if (raw32.size() != kRawKeySize) {
    return absl::InvalidArgumentError("Ed25519 public key must be 32 bytes");
  }
  EVP_PKEY* raw = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr,
                                              reinterpret_cast<const unsigned char*>(raw32.data()),
                                              raw32.size());
  if (raw == nullptr) {
    return absl::InvalidArgumentError("invalid Ed25519 public key");
  }
  auto impl = std::make_unique<Impl>();
  impl->pkey.reset(raw);
  return Ed25519Key(std::move(impl));
}

std::string Ed25519Key::PrivateRaw() const {
  if (!impl_->has_private) {
    return "";
  }
  std::string out(kRawKeySize, '\0');
  size_t len = out.size();
  if (EVP_PKEY_get_raw_private_key(impl_->pkey.get(), reinterpret_cast<unsigned char*>(out.data()),
                                   &len) != 1 ||
      len != kRawKeySize) {
    CryptoFailure();
  }
  return out;
}

std::string Ed25519Key::PublicRaw() const {
  std::string out(kRawKeySize, '\0');
  size_t len = out.size();
  if (EVP_PKEY_get_raw_public_key(impl_->pkey.get(), reinterpret_cast<unsigned char*>(out.data()),
                                  &len) != 1 ||
      len != kRawKeySize) {
    CryptoFailure();
  }
  return out;
}

bool Ed25519Key::HasPrivate() const { return impl_->has_private; }

std::string Ed25519Key::Sign(std::string_view data) const {
  // Signing with a public-only key is a programming error, not an input error.
  if (!impl_->has_private) {
    CryptoFailure();
  }
  MdCtxPtr ctx(EVP_MD_CTX_new());
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, impl_->pkey.get()) != 1) {
    CryptoFailure();
  }
  std::string sig(kSignatureSize, '\0');
  size_t len = sig.size();
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &len,
                     reinterpret_cast<const unsigned char*>(data.data()), data.size()) != 1 ||
      len != kSignatureSize) {
    CryptoFailure();
  }
  return sig;
}

bool Ed25519Key::Verify(std::string_view data, std::string_view signature) const {
  if (signature.size() != kSignatureSize) {
    return false;
  }
  MdCtxPtr ctx(EVP_MD_CTX_new());
  if (!ctx || EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, impl_->pkey.get()) != 1) {
    return false;
  }
  return EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(signature.data()),
                          signature.size(), reinterpret_cast<const unsigned char*>(data.data()),
                          data.size()) == 1;
}

}  // namespace gpuaas::authz
