#include "libs/common/ids.h"

#include <openssl/rand.h>

#include <cstdint>
#include <cstdlib>
#include <vector>

#include "libs/common/base64url.h"

namespace gpuaas {
namespace {

std::vector<uint8_t> RandomBytes(int n) {
  std::vector<uint8_t> out(static_cast<size_t>(n));
  // A CSPRNG failure after startup means the process cannot make secrets at all.
  if (RAND_bytes(out.data(), n) != 1) {
    std::abort();
  }
  return out;
}

}  // namespace

std::string NewId(std::string_view prefix) {
  constexpr std::string_view kAlphabet = "abcdefghijklmnopqrstuvwxyz234567";
  std::vector<uint8_t> bytes = RandomBytes(26);
  std::string id(prefix);
  for (uint8_t b : bytes) {
    id.push_back(kAlphabet[b % 32]);
  }
  return id;
}

std::string RandomToken(int bytes) {
  std::vector<uint8_t> raw = RandomBytes(bytes);
  return Base64UrlEncode(std::string_view(reinterpret_cast<const char*>(raw.data()), raw.size()));
}

}  // namespace gpuaas
