// Landlock confinement of a workload, applied by its shim to itself just before it execs bwrap
// (a Landlock domain is inherited by every child and cannot be lifted):
//   ports     binding a TCP port inside the agent's host-port range is refused except for the
//             workload's own ports (Landlock ABI 4), so one workload cannot take the ports
//             every later workload needs. Ports outside the range (and port 0) stay free to
//             bind: Jupyter kernels and the like bind ephemeral ports.
//   scoping   no connecting to abstract unix sockets, and no signals, outside its own domain
//             (ABI 6): each workload is its own domain, so not to another workload's either.
// Written against the system calls directly: Debian 12's headers predate ABI 4.
#pragma once

#include <string>
#include <vector>

namespace gpuaas::agent {

// The running kernel's Landlock ABI version; 0 when it has none (or it is disabled).
int LandlockAbi();

// The least ABI that confines ports (4), and the least that scopes sockets and signals (6).
inline constexpr int kLandlockPortsAbi = 4;
inline constexpr int kLandlockScopeAbi = 6;

struct PortConfinement {
  int first = 0;  // the agent's host-port range, [first, last]
  int last = -1;
  std::vector<int> own;  // the workload's ports inside it
};

// Confines the calling thread (and what it execs) as above, with what the kernel supports; sets
// no_new_privs, which Landlock needs without CAP_SYS_ADMIN. Returns "" on success (also when
// the kernel has no Landlock: the agent warns of that once), else why it failed.
std::string ConfineSelf(const PortConfinement& ports);

}  // namespace gpuaas::agent
