#include "services/agent/runtime/landlock.h"

#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <set>

namespace gpuaas::agent {
namespace {

// <linux/landlock.h> as of Linux 6.12 (ABI 6); Debian 12's copy stops at ABI 2.
struct RulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;  // ABI 4
  uint64_t scoped;              // ABI 6
};
struct NetPortAttr {
  uint64_t allowed_access;
  uint64_t port;
} __attribute__((packed));
constexpr uint32_t kCreateRulesetVersion = 1U << 0;
constexpr int kRuleNetPort = 2;
constexpr uint64_t kAccessNetBindTcp = 1ULL << 0;
constexpr uint64_t kScopeAbstractUnixSocket = 1ULL << 0;
constexpr uint64_t kScopeSignal = 1ULL << 1;

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

std::string Errno(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

}  // namespace

int LandlockAbi() {
  const long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, kCreateRulesetVersion);
  return abi < 0 ? 0 : static_cast<int>(abi);
}

std::string ConfineSelf(const PortConfinement& ports) {
  const int abi = LandlockAbi();
  if (abi < kLandlockPortsAbi) return "";
  RulesetAttr attr{};
  attr.handled_access_net = kAccessNetBindTcp;
  if (abi >= kLandlockScopeAbi) attr.scoped = kScopeAbstractUnixSocket | kScopeSignal;
  const int ruleset = static_cast<int>(syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0));
  if (ruleset < 0) return Errno("landlock_create_ruleset");
  // Every port but the range's, less the workload's own: one rule a port (Landlock has no
  // port ranges), which costs the kernel some tens of milliseconds and a few MB per workload.
  const std::set<int> own(ports.own.begin(), ports.own.end());
  std::string error;
  for (int port = 0; port <= 65535 && error.empty(); ++port) {
    if (port >= ports.first && port <= ports.last && own.count(port) == 0) continue;
    const NetPortAttr rule{.allowed_access = kAccessNetBindTcp,
                           .port = static_cast<uint64_t>(port)};
    if (syscall(SYS_landlock_add_rule, ruleset, kRuleNetPort, &rule, 0) != 0) {
      error = Errno("landlock_add_rule");
    }
  }
  if (error.empty() && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) error = Errno("no_new_privs");
  if (error.empty() && syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) {
    error = Errno("landlock_restrict_self");
  }
  close(ruleset);
  return error;
}

}  // namespace gpuaas::agent
