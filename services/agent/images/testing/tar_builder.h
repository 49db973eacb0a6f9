// Test helper: writes layer tars entry by entry with libarchive, including the hostile entries
// (absolute paths, "..", writes through symlinks) that real tools refuse to make.
#pragma once

#include <archive.h>
#include <archive_entry.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gpuaas::agent::testing {

enum class Compression { kNone, kGzip, kZstd };

class TarBuilder final {
 public:
  TarBuilder& File(const std::string& path, const std::string& content, int mode = 0644,
                   int uid = 0, int gid = 0);
  TarBuilder& Dir(const std::string& path, int mode = 0755, int uid = 0, int gid = 0);
  TarBuilder& Symlink(const std::string& path, const std::string& target);
  TarBuilder& Hardlink(const std::string& path, const std::string& target);
  TarBuilder& CharDevice(const std::string& path, int major, int minor);
  // A regular file with an xattr (pax header).
  TarBuilder& FileWithXattr(const std::string& path, const std::string& content,
                            const std::string& xattr, const std::string& value);

  // Writes the tar to `path`; returns the sha256 hex of the file's bytes.
  absl::StatusOr<std::string> Write(const std::string& path, Compression compression) const;

 private:
  struct Entry {
    std::string path, content, link;
    int type = AE_IFREG, mode = 0644, uid = 0, gid = 0, rdev_major = 0, rdev_minor = 0;
    bool hardlink = false;
    std::string xattr, xattr_value;
  };
  std::vector<Entry> entries_;
};

// The sha256 hex of a file's bytes.
absl::StatusOr<std::string> FileSha256(const std::string& path);

}  // namespace gpuaas::agent::testing
