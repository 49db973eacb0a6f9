// Password hashing for user logins: scrypt (RFC 7914) through OpenSSL, stored in one
// self-describing string so the cost can be raised later without a schema change.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gpuaas::auth {

// scrypt cost. The defaults (N=2^14, r=8, p=1) are OWASP's scrypt floor: 128·N·r = 16 MiB of
// memory and roughly 50-100 ms of one core per hash here, which caps a stolen-database attacker
// at a few dozen guesses per second per core while keeping logins cheap for us. Tests may use
// smaller values; VerifyPassword reads the cost from the stored string, so old hashes keep
// verifying after the defaults change.
struct ScryptParams {
  uint64_t n = 16384;  // CPU/memory cost; a power of two
  uint64_t r = 8;      // block size
  uint64_t p = 1;      // parallelism
};

// "scrypt$N$r$p$<salt>$<hash>" with a fresh random 16-byte salt and a 32-byte hash, both
// base64url without padding. Blocks for the duration of one scrypt run (see above); call it
// outside database transactions and locks. Crashes only if OpenSSL cannot allocate the memory
// scrypt needs, which no caller could handle.
std::string HashPassword(std::string_view password, const ScryptParams& params = {});

// Recomputes the hash with the stored salt and cost and compares in constant time. False for
// a wrong password and for any malformed or out-of-range encoding. Blocks like HashPassword.
bool VerifyPassword(std::string_view password, std::string_view encoded);

}  // namespace gpuaas::auth
