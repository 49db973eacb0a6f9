// Hashing of the high-entropy secrets the auth service hands out (API keys, refresh tokens),
// so the database stores only a digest and a leaked table grants nothing.
#pragma once

#include <string>
#include <string_view>

namespace gpuaas::auth {

// Lower-case hex SHA-256 of `secret`. Unlike passwords, these secrets are 128+ random bits
// (gpuaas::RandomToken), so brute-forcing the digest is hopeless without any stretching: a
// slow KDF would only cost us latency on every API-key exchange, and a salt is unnecessary
// because identical secrets never occur. The plain digest also lets the repository look a
// secret up by its hash with an index. Never use this for passwords.
std::string HashSecret(std::string_view secret);

// Whether HashSecret(secret) equals `stored_hash`, compared in constant time so response
// timing reveals nothing about how much of a guess matched. False for a malformed hash.
bool VerifySecret(std::string_view secret, std::string_view stored_hash);

}  // namespace gpuaas::auth
