// Reading a directory by fd, without following anything: the one place that calls readdir.
#pragma once

#include <sys/stat.h>

#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"

namespace gpuaas::storage::local {

enum class EntryType { kFile, kDir, kOther };  // kOther: symlinks, FIFOs, sockets, devices

// Calls `visit(name, type)` for every entry of the directory `dir_fd` but "." and "..", in the
// file system's order, until it returns false. Types come from d_type, or from fstatat without
// following symlinks when the file system does not fill it. Reads through its own open file
// description, so `dir_fd` may be shared. Blocks on disk I/O.
absl::Status ReadDir(int dir_fd,
                     absl::FunctionRef<bool(std::string_view name, EntryType type)> visit);

// The type of `name` in `dir_fd` without following a symlink; NOT_FOUND when absent.
absl::Status StatNoFollow(int dir_fd, const char* name, struct stat* st);

EntryType TypeOf(unsigned mode);

}  // namespace gpuaas::storage::local
