// The sandbox the image unpacker (unpacker_main.cc) puts itself in before it reads a byte of a
// registry's: whatever a hostile manifest, config or layer does to it, it costs one pull.
//   limits      address space, CPU time, file size, open files, no core dumps, and a wall-clock
//               alarm; a process over one is killed (or its write fails), the agent is not
//   identity    nobody (65534) with no supplementary groups, so it can neither signal nor trace
//               the agent (root); no new privileges
//   capability  only what writing a layer as the tar says needs (owners, modes, whiteout
//               devices, file capabilities, trusted.overlay xattrs); none to parse JSON
//   seccomp     no sockets, no exec, no fork or threads, no mounts or namespaces, no tracing,
//               nothing of the workloads' deny list (runtime/seccomp_policy.h): EPERM
//   files       Landlock: it reads only beneath the directories its job reads and writes only
//               beneath the one it unpacks into, whatever its capabilities would allow (a
//               kernel without Landlock: the rest still holds)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpuaas::agent {

// The capabilities the job keeps, beyond nobody's none.
enum class SandboxRole {
  kParse,        // none: its input was opened before the sandbox
  kReadFiles,    // DAC_READ_SEARCH: reads an OCI layout in the agent's (root's 0700) store
  kWriteLayers,  // what writing a layer as the tar says needs
};

struct SandboxLimits {
  int64_t memory_bytes = 2LL << 30;  // RLIMIT_AS
  int64_t cpu_seconds = 3600;        // RLIMIT_CPU
  int64_t file_bytes = -1;           // RLIMIT_FSIZE; -1: unlimited
  int64_t open_files = 256;          // RLIMIT_NOFILE
  int64_t deadline_seconds = 0;      // alarm(); 0: none
  SandboxRole role = SandboxRole::kParse;
  std::vector<std::string> read_beneath;   // directories the job reads files beneath
  std::vector<std::string> write_beneath;  // directories it makes and writes files beneath
};

// Confines the calling (single-threaded) process as above. Returns "" on success, else what
// failed (the caller must then exit without reading its input).
std::string EnterSandbox(const SandboxLimits& limits);

}  // namespace gpuaas::agent
