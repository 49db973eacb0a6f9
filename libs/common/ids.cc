#include "libs/common/ids.h"

#include <openssl/rand.h>

#include <cstdint>
#include <cstdlib>
#include <vector>

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
  constexpr std::string_view kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::vector<uint8_t> raw = RandomBytes(bytes);
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (uint8_t b : raw) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out.push_back(kAlphabet[(acc >> bits) & 63]);
    }
  }
  if (bits > 0) {
    out.push_back(kAlphabet[(acc << (6 - bits)) & 63]);
  }
  return out;
}

}  // namespace gpuaas
