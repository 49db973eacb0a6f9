// Telling the platform's own credentials apart from a workload's: the proxy strips ours before
// forwarding (a workload, maybe another tenant's on a public port, must never see them) and
// leaves every other Authorization alone, since an application may use its own (HTTP basic
// auth, its own bearer tokens).
//
// Ours is `Bearer <credential>` where the credential is
//   - an access token: a compact JWS whose payload's "iss" is the auth service's issuer
//     (read without verifying: an expired or forged token that claims to be ours is stripped
//     too, since it may be a real one the proxy cannot verify right now), or
//   - an API key or refresh token: "gak_..." / "grt_..." ids, as the auth service makes them.
#pragma once

#include <string_view>

namespace gpuaas::proxy {

// The issuer the auth service signs access tokens with (authz::VerifierOptions::issuer).
inline constexpr std::string_view kGpuaasIssuer = "gpuaas-auth";

// True when the Authorization field value carries a gpuaas credential. Never blocks.
bool IsGpuaasCredential(std::string_view authorization);

}  // namespace gpuaas::proxy
