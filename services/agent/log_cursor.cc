#include "services/agent/log_cursor.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <utility>
#include <vector>

namespace gpuaas::agent {
namespace {

constexpr size_t kBlock = 64 << 10;

int OpenForReading(const std::string& path) {
  return open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
}

int64_t SizeOf(int fd) {
  struct stat st;
  return fstat(fd, &st) == 0 ? st.st_size : 0;
}

// Where the last `lines` lines of fd start, read backwards a block at a time; `found` says
// how many lines the file has up to that many (a last line without its newline counts).
int64_t TailStart(int fd, int lines, int& found) {
  found = 0;
  const int64_t size = SizeOf(fd);
  if (size == 0 || lines <= 0) return size;
  std::vector<char> block(kBlock);
  int64_t end = size;
  bool skip_final_newline = true;  // the file's last byte ends its last line, not a new one
  int newlines = 0;
  while (end > 0) {
    const int64_t start = std::max<int64_t>(0, end - static_cast<int64_t>(kBlock));
    const ssize_t n = pread(fd, block.data(), static_cast<size_t>(end - start), start);
    if (n <= 0) break;
    for (ssize_t i = n - 1; i >= 0; --i) {
      if (block[i] != '\n') continue;
      if (skip_final_newline && start + i == size - 1) continue;
      if (++newlines == lines) {
        found = lines;
        return start + i + 1;
      }
    }
    skip_final_newline = false;
    end = start;
  }
  found = newlines + 1;  // the first line has no newline before it
  return 0;
}

bool SameFile(int fd, const std::string& path) {
  struct stat a, b;
  return fstat(fd, &a) == 0 && stat(path.c_str(), &b) == 0 && a.st_ino == b.st_ino &&
         a.st_dev == b.st_dev;
}

}  // namespace

LogCursor LogCursor::AtTail(std::string path, int lines) {
  LogCursor c(std::move(path));
  c.fd_ = OpenForReading(c.path_);
  int found = 0;
  if (c.fd_ >= 0) c.offset_ = TailStart(c.fd_, lines, found);
  if (found < lines && c.offset_ == 0) {
    c.older_fd_ = OpenForReading(c.path_ + ".1");
    if (c.older_fd_ >= 0) {
      int older_found = 0;
      c.older_offset_ = TailStart(c.older_fd_, lines - found, older_found);
    }
  }
  return c;
}

LogCursor::LogCursor(LogCursor&& other) noexcept
    : path_(std::move(other.path_)),
      older_fd_(std::exchange(other.older_fd_, -1)),
      older_offset_(other.older_offset_),
      fd_(std::exchange(other.fd_, -1)),
      offset_(other.offset_) {}

LogCursor::~LogCursor() {
  if (older_fd_ >= 0) close(older_fd_);
  if (fd_ >= 0) close(fd_);
}

std::string LogCursor::ReadAt(int fd, int64_t& offset, size_t max) {
  // A file truncated under us (not what the shim does, but a hand may) starts over.
  if (SizeOf(fd) < offset) offset = 0;
  std::string data(max, '\0');
  const ssize_t n = pread(fd, data.data(), max, offset);
  if (n <= 0) return {};
  data.resize(static_cast<size_t>(n));
  if (static_cast<size_t>(n) == max) {
    // More may follow: end this chunk at a line's end when it holds one.
    const size_t last = data.rfind('\n');
    if (last != std::string::npos) data.resize(last + 1);
  }
  offset += static_cast<int64_t>(data.size());
  return data;
}

std::string LogCursor::ReadSome(size_t max) {
  if (older_fd_ >= 0) {
    std::string data = ReadAt(older_fd_, older_offset_, max);
    if (!data.empty()) return data;
    close(older_fd_);
    older_fd_ = -1;
  }
  if (fd_ < 0) {
    fd_ = OpenForReading(path_);
    offset_ = 0;
    if (fd_ < 0) return {};
  }
  std::string data = ReadAt(fd_, offset_, max);
  if (!data.empty()) return data;
  // Nothing new here. If the path now names another file, ours was rotated away and is
  // complete (the shim closed it before the rename): what is left of it was read just now.
  if (SameFile(fd_, path_)) return {};
  data = ReadAt(fd_, offset_, max);  // written between the read above and the rename
  if (!data.empty()) return data;
  const int next = OpenForReading(path_);
  if (next < 0) return {};  // between the rename and the new file's creation
  close(fd_);
  fd_ = next;
  offset_ = 0;
  return ReadAt(fd_, offset_, max);
}

}  // namespace gpuaas::agent
