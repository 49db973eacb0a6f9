// Random identifiers and secrets from OpenSSL's CSPRNG.
#pragma once

#include <string>
#include <string_view>

namespace gpuaas {

// `prefix` followed by 26 lowercase base32 characters (130 random bits), e.g. "usr_k3...".
std::string NewId(std::string_view prefix);

// `bytes` random bytes, base64url without padding. For secrets shown once.
std::string RandomToken(int bytes);

}  // namespace gpuaas
