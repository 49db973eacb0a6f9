#include "services/auth/client_address.h"

#include <arpa/inet.h>

#include <array>
#include <cstring>

#include "libs/authz/roles.h"

namespace gpuaas::auth {

std::optional<std::string> ThrottleAddress(std::string_view text) {
  const std::string s(text);
  std::array<unsigned char, 16> bytes{};
  std::array<char, INET6_ADDRSTRLEN> out{};
  if (inet_pton(AF_INET, s.c_str(), bytes.data()) == 1) {
    return std::string(inet_ntop(AF_INET, bytes.data(), out.data(), out.size()));
  }
  if (inet_pton(AF_INET6, s.c_str(), bytes.data()) != 1) {
    return std::nullopt;
  }
  constexpr std::array<unsigned char, 12> kMappedPrefix = {0, 0, 0, 0, 0,    0,
                                                           0, 0, 0, 0, 0xff, 0xff};
  if (std::memcmp(bytes.data(), kMappedPrefix.data(), kMappedPrefix.size()) == 0) {
    return std::string(inet_ntop(AF_INET, bytes.data() + 12, out.data(), out.size()));
  }
  std::fill(bytes.begin() + 8, bytes.end(), 0);
  return std::string(inet_ntop(AF_INET6, bytes.data(), out.data(), out.size())) + "/64";
}

std::string ClientAddresses::Resolve(std::string_view peer,
                                     const client::ForwardedClient& forwarded) const {
  if (!forwarded.address.empty() && !forwarded.forwarder_authorization.empty()) {
    absl::StatusOr<authz::Principal> front =
        forwarders_.Authenticate(forwarded.forwarder_authorization);
    std::optional<std::string> address = ThrottleAddress(forwarded.address);
    if (front.ok() && front->Has(authz::Power::kForwardClientAddress) && address) {
      return *address;
    }
  }
  return ThrottleAddress(peer).value_or(std::string(peer));
}

}  // namespace gpuaas::auth
