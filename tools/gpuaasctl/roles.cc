#include "tools/gpuaasctl/roles.h"

#include <array>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"

namespace gpuaas::ctl {
namespace {

namespace pb = ::gpuaas::common::v1;

constexpr std::array<std::pair<std::string_view, Role>, 8> kRoles = {{
    {"viewer", pb::ROLE_VIEWER},
    {"member", pb::ROLE_MEMBER},
    {"tenant-admin", pb::ROLE_TENANT_ADMIN},
    {"platform-admin", pb::ROLE_PLATFORM_ADMIN},
    {"service", pb::ROLE_SERVICE},
    {"node-agent", pb::ROLE_NODE_AGENT},
    {"access-proxy", pb::ROLE_ACCESS_PROXY},
    {"gateway", pb::ROLE_GATEWAY},
}};

}  // namespace

absl::StatusOr<Role> ParseRole(std::string_view name) {
  std::string normal = absl::StrReplaceAll(absl::AsciiStrToLower(absl::StripAsciiWhitespace(
                                               absl::string_view(name.data(), name.size()))),
                                           {{"_", "-"}});
  // The enum's own spelling, as `-o json` prints it (ROLE_TENANT_ADMIN), works too.
  absl::string_view unprefixed = normal;
  if (absl::ConsumePrefix(&unprefixed, "role-")) {
    normal = std::string(unprefixed);
  }
  for (const auto& [n, role] : kRoles) {
    if (normal == n) {
      return role;
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown role \"", std::string(name),
                   "\": want tenant-admin, member, viewer, platform-admin, service, node-agent, "
                   "access-proxy or gateway"));
}

std::string RoleDisplayName(Role role) {
  if (role == pb::ROLE_UNSPECIFIED) {
    return "";
  }
  for (const auto& [n, r] : kRoles) {
    if (r == role) {
      return std::string(n);
    }
  }
  return absl::StrCat(static_cast<int>(role));
}

}  // namespace gpuaas::ctl
