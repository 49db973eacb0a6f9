#include "services/storage/local/staged_file.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/rand.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "services/storage/local/object_meta.h"
#include "services/storage/local/safe_path.h"

namespace gpuaas::storage::local {
namespace {

constexpr size_t kCopyBuffer = 1 << 20;
// Below this a chunk is hashed faster than it is handed to another thread.
constexpr size_t kParallelHashBytes = 128 << 10;

// One chunk's hash offered to a pool thread; whoever claims it first hashes it.
struct HashJob {
  std::atomic<bool> claimed{false};
  absl::Notification done;
  bool Claim() { return !claimed.exchange(true); }
};

absl::Status WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return ErrnoStatus(errno, "write");
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

// The read/write way for file systems (or kernels) without copy_file_range between these files.
absl::Status CopyByReading(int src_fd, int64_t offset, int64_t length, int dst_fd) {
  std::vector<char> buffer(kCopyBuffer);
  while (length > 0) {
    const size_t want = static_cast<size_t>(std::min<int64_t>(length, kCopyBuffer));
    const ssize_t n = ::pread(src_fd, buffer.data(), want, offset);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return ErrnoStatus(errno, "read");
    }
    if (n == 0) {
      return absl::FailedPreconditionError("copy: the source ended early (changed meanwhile)");
    }
    absl::Status status = WriteAll(dst_fd, buffer.data(), static_cast<size_t>(n));
    if (!status.ok()) {
      return status;
    }
    offset += n;
    length -= n;
  }
  return absl::OkStatus();
}

}  // namespace

std::string RandomStagingName(std::string_view suffix) {
  unsigned char bytes[16];
  // A CSPRNG failure after startup means the process cannot name anything safely.
  if (RAND_bytes(bytes, sizeof bytes) != 1) {
    std::abort();
  }
  return absl::StrCat(ToHex(std::string_view(reinterpret_cast<const char*>(bytes), sizeof bytes)),
                      std::string(suffix));
}

absl::StatusOr<std::unique_ptr<StagedFile>> StagedFile::Create(int staging_fd,
                                                               ThreadPool* hashers) {
  std::string name = RandomStagingName(".tmp");
  const int fd =
      ::openat(staging_fd, name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0) {
    return ErrnoStatus(errno, "create a staging file");
  }
  return std::unique_ptr<StagedFile>(
      new StagedFile(staging_fd, hashers, std::move(name), UniqueFd(fd)));
}

StagedFile::~StagedFile() {
  if (!published_) {
    ::unlinkat(staging_fd_, name_.c_str(), 0);
  }
}

absl::Status StagedFile::Append(std::string_view data) {
  // MD5 and the copy into the page cache each cost about as much; on two cores they overlap.
  // The job is claimed by this thread if no pool thread has started it when the write is done,
  // so a busy pool never makes a writer wait.
  std::shared_ptr<HashJob> job;
  if (hashers_ != nullptr && data.size() >= kParallelHashBytes) {
    job = std::make_shared<HashJob>();
    if (!hashers_->TrySubmit([job, md5 = &md5_, data] {
          if (job->Claim()) {
            md5->Update(data);
            job->done.Notify();
          }
        })) {
      job.reset();
    }
  }
  absl::Status status = WriteAll(fd_.get(), data.data(), data.size());
  if (job == nullptr || job->Claim()) {
    md5_.Update(data);
  } else {
    job->done.WaitForNotification();  // `data` and md5_ are in use until then
  }
  if (!status.ok()) {
    return status;
  }
  size_ += static_cast<int64_t>(data.size());
  return absl::OkStatus();
}

absl::Status StagedFile::AppendFrom(int src_fd, int64_t offset, int64_t length) {
  int64_t done = 0;
  while (done < length) {
    loff_t in = offset + done;
    const size_t want = static_cast<size_t>(std::min<int64_t>(length - done, 1 << 30));
    const ssize_t n = ::copy_file_range(src_fd, &in, fd_.get(), nullptr, want, 0);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      if (errno == EXDEV || errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP) {
        absl::Status status = CopyByReading(src_fd, offset + done, length - done, fd_.get());
        if (!status.ok()) {
          return status;
        }
        break;
      }
      return ErrnoStatus(errno, "copy");
    }
    if (n == 0) {
      return absl::FailedPreconditionError("copy: the source ended early (changed meanwhile)");
    }
    done += n;
  }
  size_ += length;
  return absl::OkStatus();
}

absl::StatusOr<std::string> StagedFile::Md5FromDisk() const {
  Md5 md5;
  std::vector<char> buffer(kCopyBuffer);
  int64_t offset = 0;
  while (offset < size_) {
    const ssize_t n = ::pread(fd_.get(), buffer.data(), buffer.size(), offset);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return ErrnoStatus(errno, "read back");
    }
    if (n == 0) {
      return absl::InternalError("read back: the staged file is shorter than written");
    }
    md5.Update(std::string_view(buffer.data(), static_cast<size_t>(n)));
    offset += n;
  }
  return md5.Digest();
}

absl::StatusOr<struct stat> StagedFile::Seal(std::string_view etag, std::string_view content_type,
                                             bool sync) {
  struct stat st;
  if (::fstat(fd_.get(), &st) != 0) {
    return ErrnoStatus(errno, "stat the staged file");
  }
  if (st.st_size != size_) {
    return absl::InternalError(
        absl::StrCat("staged file holds ", st.st_size, " bytes, ", size_, " were written"));
  }
  absl::Status status = WriteObjectMeta(fd_.get(), st, etag, content_type);
  if (!status.ok()) {
    return status;
  }
  if (sync) {
    status = SyncFd(fd_.get(), "the new file");
    if (!status.ok()) {
      return status;
    }
  }
  return st;
}

absl::Status StagedFile::PublishAt(int dir_fd, const std::string& name) {
  if (::renameat(staging_fd_, name_.c_str(), dir_fd, name.c_str()) != 0) {
    return ErrnoStatus(errno, "rename into place");
  }
  published_ = true;
  return absl::OkStatus();
}

}  // namespace gpuaas::storage::local
