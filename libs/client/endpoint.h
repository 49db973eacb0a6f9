// Where a downstream service is and how to reach it, resolved by the order of settings.h:
//
//   address   --<service>-addr flag, GPUAAS_<SERVICE>_ADDR, stack.env, the design default
//             (auth localhost:17051, stock :17052, storage :17053, instance :17054)
//   TLS       --ca/--cert/--key flags, GPUAAS_TLS_CA / GPUAAS_TLS_CERT / GPUAAS_TLS_KEY,
//             stack.env; no CA = plaintext
//
// so a `tools/gpuaas up --tls` stack works without flags.
//
//   client::Settings settings(client::ProcessEnv(), std::filesystem::current_path());
//   GPUAAS_ASSIGN_OR_RETURN(client::Endpoint auth,
//                           client::ResolveEndpoint(client::Service::kAuth, flags, settings));
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "libs/client/settings.h"
#include "libs/client/tls.h"

namespace gpuaas::client {

// The gpuaas services a binary may call.
enum class Service { kAuth, kStock, kStorage, kInstance };

inline constexpr std::string_view kTlsCaEnv = "GPUAAS_TLS_CA";
inline constexpr std::string_view kTlsCertEnv = "GPUAAS_TLS_CERT";
inline constexpr std::string_view kTlsKeyEnv = "GPUAAS_TLS_KEY";

// "auth", "stock", "storage", "instance".
std::string_view ServiceName(Service service);

// "GPUAAS_AUTH_ADDR" ...: the variable that names the service's address.
std::string_view AddressEnvVar(Service service);

// "localhost:17051" ...: the dev stack's address of the service (design.md, Config).
std::string_view DefaultAddress(Service service);

struct Endpoint {
  std::string address;  // "host:port"
  TlsOptions tls;
};

// Fills each field of `flags` left empty by the order above; tls.server_name_override is
// taken from `flags` only. Error: FAILED_PRECONDITION when a stack.env exists but cannot be
// read. The TLS files are not read here: OpenChannel reads (and checks) them.
absl::StatusOr<Endpoint> ResolveEndpoint(Service service, const Endpoint& flags,
                                         Settings& settings);

}  // namespace gpuaas::client
