#include "libs/common/base64url.h"

#include <array>
#include <cstdint>

namespace gpuaas {
namespace {

constexpr std::string_view kAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

constexpr std::array<int8_t, 256> MakeDecodeTable() {
  std::array<int8_t, 256> table{};
  for (auto& v : table) {
    v = -1;
  }
  for (size_t i = 0; i < kAlphabet.size(); ++i) {
    table[static_cast<uint8_t>(kAlphabet[i])] = static_cast<int8_t>(i);
  }
  return table;
}

constexpr std::array<int8_t, 256> kDecode = MakeDecodeTable();

}  // namespace

std::string Base64UrlEncode(std::string_view data) {
  std::string out;
  out.reserve((data.size() * 4 + 2) / 3);
  uint32_t acc = 0;
  int bits = 0;
  for (char c : data) {
    acc = (acc << 8) | static_cast<uint8_t>(c);
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

// Strict: padding, whitespace, the standard alphabet's '+' and '/', a dangling single
// character, and non-zero leftover bits are all refused, so every byte string has exactly one
// accepted encoding and a signed token cannot be re-spelled.
absl::StatusOr<std::string> Base64UrlDecode(std::string_view text) {
  if (text.size() % 4 == 1) {
    return absl::InvalidArgumentError("invalid base64url length");
  }
  std::string out;
  out.reserve(text.size() * 3 / 4);
  uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    const int8_t v = kDecode[static_cast<uint8_t>(c)];
    if (v < 0) {
      return absl::InvalidArgumentError("invalid base64url character");
    }
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  if (bits > 0 && (acc & ((1u << bits) - 1)) != 0) {
    return absl::InvalidArgumentError("non-canonical base64url");
  }
  return out;
}

}  // namespace gpuaas
