#include "services/auth/credentials/password.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <charconv>
#include <cstdlib>
#include <optional>
#include <vector>

#include "libs/common/base64url.h"

namespace gpuaas::auth {
namespace {

constexpr std::string_view kScheme = "scrypt";
constexpr size_t kSaltSize = 16;
constexpr size_t kHashSize = 32;
// Bounds on a stored cost: the stored string comes from our database, but a corrupted or
// planted row must not make one login allocate gigabytes or spin for minutes.
constexpr uint64_t kMaxN = uint64_t{1} << 20;
constexpr uint64_t kMaxR = 32;
constexpr uint64_t kMaxP = 16;
constexpr uint64_t kMaxMemory = uint64_t{1} << 30;

std::optional<std::string> Scrypt(std::string_view password, std::string_view salt,
                                  const ScryptParams& params, size_t out_size) {
  // OpenSSL's default limit is 32 MiB; give it exactly what these parameters need plus slack.
  const uint64_t max_mem = 128 * params.n * params.r + 128 * params.r * params.p + (1 << 20);
  std::string out(out_size, '\0');
  if (EVP_PBE_scrypt(password.data(), password.size(),
                     reinterpret_cast<const unsigned char*>(salt.data()), salt.size(), params.n,
                     params.r, params.p, max_mem, reinterpret_cast<unsigned char*>(out.data()),
                     out.size()) != 1) {
    return std::nullopt;
  }
  return out;
}

bool ValidParams(const ScryptParams& p) {
  if (p.n < 2 || p.n > kMaxN || (p.n & (p.n - 1)) != 0) {
    return false;
  }
  if (p.r < 1 || p.r > kMaxR || p.p < 1 || p.p > kMaxP) {
    return false;
  }
  return 128 * p.n * p.r <= kMaxMemory;
}

std::optional<uint64_t> ParseUint(std::string_view s) {
  uint64_t v = 0;
  if (s.empty() || s.size() > 10 || s[0] == '0') {
    return std::nullopt;
  }
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) {
    return std::nullopt;
  }
  return v;
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t pos = s.find(sep, start);
    parts.push_back(s.substr(start, pos == std::string_view::npos ? pos : pos - start));
    if (pos == std::string_view::npos) {
      return parts;
    }
    start = pos + 1;
  }
}

}  // namespace

std::string HashPassword(std::string_view password, const ScryptParams& params) {
  std::string salt(kSaltSize, '\0');
  if (!ValidParams(params) || RAND_bytes(reinterpret_cast<unsigned char*>(salt.data()),
                                         static_cast<int>(salt.size())) != 1) {
    std::abort();  // bad compiled-in parameters or a broken CSPRNG: nothing can be stored safely
  }
  std::optional<std::string> hash = Scrypt(password, salt, params, kHashSize);
  if (!hash.has_value()) {
    std::abort();
  }
  return std::string(kScheme) + "$" + std::to_string(params.n) + "$" + std::to_string(params.r) +
         "$" + std::to_string(params.p) + "$" + Base64UrlEncode(salt) + "$" +
         Base64UrlEncode(*hash);
}

bool VerifyPassword(std::string_view password, std::string_view encoded) {
  std::vector<std::string_view> parts = Split(encoded, '$');
  if (parts.size() != 6 || parts[0] != kScheme) {
    return false;
  }
  std::optional<uint64_t> n = ParseUint(parts[1]);
  std::optional<uint64_t> r = ParseUint(parts[2]);
  std::optional<uint64_t> p = ParseUint(parts[3]);
  if (!n || !r || !p) {
    return false;
  }
  const ScryptParams params{.n = *n, .r = *r, .p = *p};
  if (!ValidParams(params)) {
    return false;
  }
  absl::StatusOr<std::string> salt = Base64UrlDecode(parts[4]);
  absl::StatusOr<std::string> want = Base64UrlDecode(parts[5]);
  // A shortened hash would let a prefix match; we only ever write kHashSize bytes.
  if (!salt.ok() || !want.ok() || salt->size() < 8 || want->size() != kHashSize) {
    return false;
  }
  std::optional<std::string> got = Scrypt(password, *salt, params, want->size());
  return got.has_value() && CRYPTO_memcmp(got->data(), want->data(), want->size()) == 0;
}

}  // namespace gpuaas::auth
