#include "libs/registry_policy/registry_policy.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace gpuaas::registry {
namespace {

struct V4Range {
  uint32_t base;
  int bits;
};

// The IPv4 ranges no registry of a tenant's may sit in.
constexpr std::array<V4Range, 9> kRefusedV4 = {{
    {0x00000000, 8},   // 0/8: "this network", 0.0.0.0
    {0x0a000000, 8},   // 10/8
    {0x64400000, 10},  // 100.64/10: CGNAT
    {0x7f000000, 8},   // 127/8: loopback
    {0xa9fe0000, 16},  // 169.254/16: link-local (cloud metadata)
    {0xac100000, 12},  // 172.16/12
    {0xc0a80000, 16},  // 192.168/16
    {0xc0000000, 24},  // 192.0.0/24: protocol assignments
    {0xe0000000, 3},   // 224/4 multicast and 240/4 reserved, broadcast included
}};

bool PublicV4(uint32_t a) {
  for (const V4Range& r : kRefusedV4) {
    const uint32_t mask = r.bits == 0 ? 0 : ~uint32_t{0} << (32 - r.bits);
    if ((a & mask) == r.base) return false;
  }
  return true;
}

uint32_t V4At(const uint8_t* b) {
  return uint32_t{b[0]} << 24 | uint32_t{b[1]} << 16 | uint32_t{b[2]} << 8 | uint32_t{b[3]};
}

bool PublicV6(const in6_addr& a) {
  const uint8_t* b = a.s6_addr;
  static constexpr uint8_t kZero[16] = {};
  // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::a.b.c.d)
  // reach the IPv4 address they carry.
  static constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  static constexpr uint8_t kNat64[12] = {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
  if (std::memcmp(b, kMapped, 12) == 0 || std::memcmp(b, kNat64, 12) == 0) {
    return PublicV4(V4At(b + 12));
  }
  if (std::memcmp(b, kZero, 12) == 0) return false;         // ::, ::1, IPv4-compatible
  if (b[0] == 0xff) return false;                           // multicast
  if ((b[0] & 0xfe) == 0xfc) return false;                  // fc00::/7: unique local
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) return false;  // fe80::/10: link-local
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0) return false;  // fec0::/10: site-local
  // 2002::/16 (6to4) carries an IPv4 address too.
  if (b[0] == 0x20 && b[1] == 0x02) return PublicV4(V4At(b + 2));
  return true;
}

bool SameHost(const std::string& numeric, const sockaddr* address) {
  char text[INET6_ADDRSTRLEN] = {};
  if (address->sa_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(address)->sin_addr, text, sizeof text);
  } else if (address->sa_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr, text,
              sizeof text);
  }
  return numeric == text;
}

int PortOf(const sockaddr* address) {
  if (address->sa_family == AF_INET) {
    return ntohs(reinterpret_cast<const sockaddr_in*>(address)->sin_port);
  }
  if (address->sa_family == AF_INET6) {
    return ntohs(reinterpret_cast<const sockaddr_in6*>(address)->sin6_port);
  }
  return -1;
}

// `host`'s numeric addresses (the host itself when numeric); empty when it does not resolve.
std::vector<std::string> Addresses(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0) return {};
  std::vector<std::string> out;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    char text[NI_MAXHOST];
    if (getnameinfo(a->ai_addr, a->ai_addrlen, text, sizeof text, nullptr, 0, NI_NUMERICHOST) ==
        0) {
      if (std::find(out.begin(), out.end(), text) == out.end()) out.emplace_back(text);
    }
  }
  freeaddrinfo(found);
  return out;
}

absl::StatusOr<std::vector<RegistryAddress>> ParseList(absl::string_view flag,
                                                       const std::vector<std::string>& entries) {
  std::vector<RegistryAddress> out;
  for (const std::string& entry : entries) {
    if (entry.empty()) continue;
    absl::StatusOr<RegistryAddress> parsed = ParseRegistryAddress(entry);
    if (!parsed.ok() || entry.find(':', entry.rfind(']') + 1) == std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          flag, ": \"", entry, "\" is not host:port (a registry as references name it)"));
    }
    out.push_back(*std::move(parsed));
  }
  return out;
}

bool Listed(const std::vector<RegistryAddress>& list, const RegistryAddress& registry) {
  return std::any_of(list.begin(), list.end(), [&](const RegistryAddress& r) {
    return r.host == registry.host && r.port == registry.port;
  });
}

}  // namespace

std::string RegistryAddress::HostPort() const {
  return host.find(':') == std::string::npos ? absl::StrCat(host, ":", port)
                                             : absl::StrCat("[", host, "]:", port);
}

absl::StatusOr<RegistryAddress> ParseRegistryAddress(absl::string_view registry) {
  RegistryAddress out;
  absl::string_view host = registry;
  absl::string_view port;
  if (absl::StartsWith(registry, "[")) {
    const size_t close = registry.find(']');
    if (close == absl::string_view::npos) return absl::InvalidArgumentError("registry: bad host");
    host = registry.substr(1, close - 1);
    absl::string_view rest = registry.substr(close + 1);
    if (!rest.empty()) {
      if (rest[0] != ':') return absl::InvalidArgumentError("registry: bad port");
      port = rest.substr(1);
    }
    in6_addr v6;
    if (inet_pton(AF_INET6, std::string(host).c_str(), &v6) != 1) {
      return absl::InvalidArgumentError("registry: bad IPv6 address");
    }
  } else if (const size_t colon = registry.rfind(':'); colon != absl::string_view::npos) {
    host = registry.substr(0, colon);
    port = registry.substr(colon + 1);
  }
  if (host.empty() || host.size() > 253) return absl::InvalidArgumentError("registry: bad host");
  const bool bracketed = absl::StartsWith(registry, "[");
  for (char c : host) {
    if (!(absl::ascii_isalnum(c) || c == '.' || c == '-' || (bracketed && c == ':'))) {
      return absl::InvalidArgumentError("registry: bad host");
    }
  }
  if (!port.empty() && (!absl::SimpleAtoi(port, &out.port) || out.port < 1 || out.port > 65535)) {
    return absl::InvalidArgumentError("registry: bad port");
  }
  out.host = absl::AsciiStrToLower(host);
  return out;
}

absl::StatusOr<RegistryAddress> RegistryOfReference(absl::string_view reference) {
  const size_t slash = reference.find('/');
  if (slash == absl::string_view::npos) return absl::InvalidArgumentError("reference: no registry");
  return ParseRegistryAddress(reference.substr(0, slash));
}

bool IsPublicAddress(absl::string_view address) {
  const std::string text(address);
  in_addr v4;
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) return PublicV4(ntohl(v4.s_addr));
  in6_addr v6;
  if (inet_pton(AF_INET6, text.c_str(), &v6) == 1) return PublicV6(v6);
  return false;
}

bool IsPublicAddress(const sockaddr* address) {
  if (address->sa_family == AF_INET) {
    return PublicV4(ntohl(reinterpret_cast<const sockaddr_in*>(address)->sin_addr.s_addr));
  }
  if (address->sa_family == AF_INET6) {
    return PublicV6(reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr);
  }
  return false;  // a unix socket or anything else is no registry
}

absl::StatusOr<RegistryPolicy> RegistryPolicy::Create(const std::vector<std::string>& allowed,
                                                      const std::vector<std::string>& insecure) {
  RegistryPolicy policy;
  absl::StatusOr<std::vector<RegistryAddress>> a = ParseList("--allowed-registries", allowed);
  if (!a.ok()) return a.status();
  absl::StatusOr<std::vector<RegistryAddress>> i = ParseList("--insecure-registries", insecure);
  if (!i.ok()) return i.status();
  policy.allowed_ = *std::move(a);
  policy.insecure_ = *std::move(i);
  return policy;
}

bool RegistryPolicy::Allowed(const RegistryAddress& registry) const {
  return Listed(allowed_, registry);
}

bool RegistryPolicy::Insecure(const RegistryAddress& registry) const {
  return Listed(insecure_, registry);
}

bool RegistryPolicy::VerifiesTls(absl::string_view reference) const {
  absl::StatusOr<RegistryAddress> registry = RegistryOfReference(reference);
  return !registry.ok() || !Insecure(*registry);
}

absl::Status RegistryPolicy::CheckReference(absl::string_view reference) const {
  absl::StatusOr<RegistryAddress> registry = RegistryOfReference(reference);
  if (!registry.ok()) return registry.status();
  return Resolve(*registry).status();
}

absl::StatusOr<std::vector<std::string>> RegistryPolicy::Resolve(
    const RegistryAddress& registry) const {
  std::vector<std::string> addresses = Addresses(registry.host);
  if (addresses.empty()) return absl::UnavailableError(kUnreachable);
  if (Allowed(registry)) return addresses;
  for (const std::string& address : addresses) {
    if (!IsPublicAddress(address)) return absl::PermissionDeniedError(kNotAllowed);
  }
  return addresses;
}

bool RegistryPolicy::MayConnect(const sockaddr* address) const {
  if (IsPublicAddress(address)) return true;
  const int port = PortOf(address);
  for (const RegistryAddress& r : allowed_) {
    if (r.port != port) continue;
    for (const std::string& numeric : Addresses(r.host)) {
      if (SameHost(numeric, address)) return true;
    }
  }
  return false;
}

}  // namespace gpuaas::registry
