// Which instance port a request names: the Host of `http://<instance_id>-<port>.<domain>/`.
// Instance ids contain '-', so the first label splits at its LAST '-'. Anything else (another
// domain, a deeper or shallower name, a port outside 1..65535, an id the instance service
// would refuse) names nothing, and the proxy answers 404.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpuaas::proxy {

struct AccessHost {
  std::string instance_id;
  int32_t port = 0;
};

// Parses a Host header value against the access domain (e.g. "gpuaas.localhost"), both
// case-insensitive; the Host's own ":port" suffix is ignored, a trailing '.' too. nullopt when
// it names no instance port. Never blocks.
std::optional<AccessHost> ParseAccessHost(std::string_view host, std::string_view access_domain);

// The host part of a Host header without its ":port" (IPv6 literals keep their brackets),
// lowercased. "" for an empty or malformed value.
std::string HostWithoutPort(std::string_view host);

}  // namespace gpuaas::proxy
