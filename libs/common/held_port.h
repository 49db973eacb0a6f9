// A TCP port of the node held by binding it (all IPv4 addresses, never listened on): while the
// descriptor lives no other program can bind the port. The agent holds each workload's host
// ports so: the node forwards them into the workload, and a program that took one would find
// its clients there. A forwarded port that nobody holds was left by a workload that is gone.
#pragma once

#include "libs/common/unique_fd.h"

namespace gpuaas {

// Invalid when the port is taken (or no descriptor is left).
UniqueFd HoldTcpPort(int port);

}  // namespace gpuaas
