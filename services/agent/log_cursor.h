// A reading position in one capped log of a workload (runtime/shim_main.cc writes it): the
// shim appends to <name>.log and, when that reaches half the cap, renames it to <name>.log.1
// (dropping the older half) and starts a fresh <name>.log. A cursor starts at the last N lines
// of the pair and then reads what is appended, like `tail -n N -F`: across a rotation it
// finishes the renamed file before it opens the new one. A rotation twice over between two
// reads (a workload writing faster than its reader) skips the middle file: the cap wins.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace gpuaas::agent {

class LogCursor final {
 public:
  // Positioned at the start of the last `lines` lines of `path` (".../stdout.log"), reaching
  // into `path`.1 when `path` holds fewer. A missing file reads as empty (and is opened once
  // it appears). Never fails; does not block beyond reading the files' ends.
  static LogCursor AtTail(std::string path, int lines);

  LogCursor(LogCursor&& other) noexcept;
  LogCursor& operator=(LogCursor&&) = delete;
  LogCursor(const LogCursor&) = delete;
  ~LogCursor();

  // The next bytes after the position, at most `max`, cut after their last newline when they
  // hold one (so chunks are whole lines except a line still being written); empty when
  // nothing new was written. Follows a rotation. Does not block.
  std::string ReadSome(size_t max);

 private:
  explicit LogCursor(std::string path) : path_(std::move(path)) {}

  // Reads from fd at *offset; advances it.
  static std::string ReadAt(int fd, int64_t& offset, size_t max);

  std::string path_;
  int older_fd_ = -1;  // the part of <path>.1 still to send first
  int64_t older_offset_ = 0;
  int fd_ = -1;  // <path> as last opened
  int64_t offset_ = 0;
};

}  // namespace gpuaas::agent
