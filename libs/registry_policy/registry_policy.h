// Which image registries the platform reaches, and how: the instance service's pinner and the
// node agent's pulls ask one RegistryPolicy, so both refuse the same addresses and speak TLS to
// the same registries.
//
// A tenant names any registry in an image reference. Without a rule, a reference naming the
// control plane's own ports (127.0.0.1:5432, a service's gRPC port, 169.254.169.254, a LAN
// address) makes the platform a port scanner of its own network. So every address a registry's
// name resolves to must be public: loopback, link-local, private (RFC 1918, ULA), CGNAT
// (100.64/10), unspecified, multicast and reserved addresses are refused, IPv4-mapped and NAT64
// IPv6 addresses as the IPv4 address they carry. The operator names the registries that may
// sit on such an address (--allowed-registries host:port,...): the dev stack's own, a LAN
// mirror. TLS is verified for every registry but those the operator names insecure
// (--insecure-registries host:port,...).
//
// Resolve() checks a registry before the first connection and returns the addresses checked,
// which the caller connects to (no second resolution a DNS answer could change in between);
// MayConnect() checks each connection again at the socket (a redirect, a token realm).
//
// Failures reach a tenant as one of three messages, never with anything the remote sent:
// kNotAllowed, kUnreachable and, from the callers, an auth failure.
#pragma once

#include <sys/socket.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gpuaas::registry {

// What a tenant hears when a registry's address is refused.
inline constexpr char kNotAllowed[] = "registry address not allowed";
// What a tenant hears for every failure to reach or to understand a registry: which port
// answered, how and with what must not tell an attacker anything.
inline constexpr char kUnreachable[] = "registry unreachable or not an OCI registry";

// A registry as an image reference names it ("host", "host:port", "[v6]:port"), split. The
// port is 443 when the reference names none.
struct RegistryAddress {
  std::string host;  // lower case, IPv6 without brackets
  int port = 443;
  // "host:port" ("[v6]:port"): how flags name it.
  std::string HostPort() const;
};

// `registry` split; INVALID_ARGUMENT for a bad host or port.
absl::StatusOr<RegistryAddress> ParseRegistryAddress(absl::string_view registry);

// The registry of a reference as the instance service pins them ("host[:port]/repo@digest":
// always with its host); INVALID_ARGUMENT when it names none.
absl::StatusOr<RegistryAddress> RegistryOfReference(absl::string_view reference);

// Whether the platform may connect to `address` (a numeric IPv4 or IPv6 address) without the
// operator's leave: false for the ranges above.
bool IsPublicAddress(absl::string_view address);
bool IsPublicAddress(const sockaddr* address);

class RegistryPolicy final {
 public:
  // Every registry public-only, TLS verified.
  RegistryPolicy() = default;
  // `allowed` and `insecure` are "host:port" entries (flags' values). Errors: INVALID_ARGUMENT
  // naming --allowed-registries or --insecure-registries and the entry.
  static absl::StatusOr<RegistryPolicy> Create(const std::vector<std::string>& allowed,
                                               const std::vector<std::string>& insecure);

  // Whether the operator allowed `registry` on any address.
  bool Allowed(const RegistryAddress& registry) const;
  // Whether `registry` is spoken to without verifying TLS (or over plain HTTP).
  bool Insecure(const RegistryAddress& registry) const;
  // Whether pulling `reference` ("host[:port]/repo...") verifies its registry's TLS: true but
  // for the insecure registries (and a reference that names no valid registry).
  bool VerifiesTls(absl::string_view reference) const;
  // The check before pulling `reference`: Resolve() of its registry. Errors as Resolve's;
  // INVALID_ARGUMENT when it names no valid registry.
  absl::Status CheckReference(absl::string_view reference) const;

  // The numeric addresses `registry` resolves to, every one checked: all public, or the
  // registry allowed. Blocks on DNS. Errors: PERMISSION_DENIED kNotAllowed; UNAVAILABLE
  // kUnreachable when the name does not resolve.
  absl::StatusOr<std::vector<std::string>> Resolve(const RegistryAddress& registry) const;

  // The check at each connection (redirect hops and token realms included): `address` is
  // public, or it is an address of an allowed registry and `address`'s port is that
  // registry's. Resolves allowed registries named by a name (blocks on DNS).
  bool MayConnect(const sockaddr* address) const;

 private:
  std::vector<RegistryAddress> allowed_;
  std::vector<RegistryAddress> insecure_;
};

}  // namespace gpuaas::registry
