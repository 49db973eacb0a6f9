// A new file in the staging directory (outside every volume, on the same file system) that
// becomes visible only when published by rename into its place, so an abandoned or failed
// write never leaves a partial file under a real name. Dropped unpublished, it is removed; a
// crash leaves it in staging, which the backend purges at start.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "libs/common/errno_status.h"
#include "libs/common/thread_pool.h"
#include "libs/common/unique_fd.h"
#include "services/storage/local/md5.h"

namespace gpuaas::storage::local {

class StagedFile final {
 public:
  // A new empty file under a random name in `staging_fd`. `hashers`, when given, hash large
  // chunks while the caller's thread writes them. Both must outlive the file.
  static absl::StatusOr<std::unique_ptr<StagedFile>> Create(int staging_fd,
                                                            ThreadPool* hashers = nullptr);
  ~StagedFile();
  StagedFile(const StagedFile&) = delete;
  StagedFile& operator=(const StagedFile&) = delete;

  // Appends and hashes. RESOURCE_EXHAUSTED when the disk is full.
  absl::Status Append(std::string_view data);
  // Appends `length` bytes of `src_fd` from `offset` inside the kernel (copy_file_range, or
  // read/write where the file system cannot); not hashed. FAILED_PRECONDITION when the source
  // ends early (it shrank meanwhile).
  absl::Status AppendFrom(int src_fd, int64_t offset, int64_t length);
  // The MD5 of the whole file read back from disk (after AppendFrom).
  absl::StatusOr<std::string> Md5FromDisk() const;

  int64_t size() const { return size_; }
  // The MD5 of what Append wrote (raw bytes).
  std::string Md5Digest() const { return md5_.Digest(); }
  int fd() const { return fd_.get(); }
  const std::string& name() const { return name_; }

  // Records `etag` and `content_type` with the file and, when `sync`, makes content and
  // metadata durable; returns the file's stat as published.
  absl::StatusOr<struct stat> Seal(std::string_view etag, std::string_view content_type, bool sync);
  // Renames the file to `name` in `dir_fd`, atomically replacing what is there (a symlink is
  // replaced as itself, never followed). Afterwards the file is no longer this object's.
  absl::Status PublishAt(int dir_fd, const std::string& name);

 private:
  StagedFile(int staging_fd, ThreadPool* hashers, std::string name, UniqueFd fd)
      : staging_fd_(staging_fd), hashers_(hashers), name_(std::move(name)), fd_(std::move(fd)) {}

  int staging_fd_;
  ThreadPool* hashers_;
  std::string name_;
  UniqueFd fd_;
  int64_t size_ = 0;
  Md5 md5_;
  bool published_ = false;
};

// A name no other staged file gets: 32 random hex digits and `suffix`.
std::string RandomStagingName(std::string_view suffix);

}  // namespace gpuaas::storage::local
