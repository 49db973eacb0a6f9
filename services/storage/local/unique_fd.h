// File descriptors that close themselves, and errno turned into absl::Status, for the local
// backend's *at() system calls.
#pragma once

#include <unistd.h>

#include <string_view>
#include <utility>

#include "absl/status/status.h"

namespace gpuaas::storage::local {

class UniqueFd final {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
      Reset(std::exchange(other.fd_, -1));
    }
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { Reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void Reset(int fd = -1) {
    if (fd_ >= 0) {
      ::close(fd_);
    }
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

// `what` failed with `err`: the code a caller can act on (ENOENT → NOT_FOUND, ELOOP/EXDEV →
// PERMISSION_DENIED, ENOSPC → RESOURCE_EXHAUSTED, ENOTDIR/EISDIR → FAILED_PRECONDITION, ...),
// and a message "<what>: <strerror>". `what` must not name host paths that clients may see.
absl::Status ErrnoStatus(int err, std::string_view what);

}  // namespace gpuaas::storage::local
