#include "services/agent/images/testing/tar_builder.h"

#include <openssl/evp.h>
#include <sys/sysmacros.h>

#include <memory>

#include "absl/strings/str_cat.h"
#include "libs/common/files.h"

namespace gpuaas::agent::testing {

TarBuilder& TarBuilder::File(const std::string& path, const std::string& content, int mode, int uid,
                             int gid) {
  entries_.push_back({.path = path, .content = content, .mode = mode, .uid = uid, .gid = gid});
  return *this;
}

TarBuilder& TarBuilder::Dir(const std::string& path, int mode, int uid, int gid) {
  entries_.push_back({.path = path, .type = AE_IFDIR, .mode = mode, .uid = uid, .gid = gid});
  return *this;
}

TarBuilder& TarBuilder::Symlink(const std::string& path, const std::string& target) {
  entries_.push_back({.path = path, .link = target, .type = AE_IFLNK, .mode = 0777});
  return *this;
}

TarBuilder& TarBuilder::Hardlink(const std::string& path, const std::string& target) {
  entries_.push_back({.path = path, .link = target, .hardlink = true});
  return *this;
}

TarBuilder& TarBuilder::CharDevice(const std::string& path, int major, int minor) {
  entries_.push_back(
      {.path = path, .type = AE_IFCHR, .mode = 0666, .rdev_major = major, .rdev_minor = minor});
  return *this;
}

TarBuilder& TarBuilder::FileWithXattr(const std::string& path, const std::string& content,
                                      const std::string& xattr, const std::string& value) {
  entries_.push_back({.path = path, .content = content, .xattr = xattr, .xattr_value = value});
  return *this;
}

absl::StatusOr<std::string> TarBuilder::Write(const std::string& path,
                                              Compression compression) const {
  std::unique_ptr<archive, decltype(&archive_write_free)> a(archive_write_new(),
                                                            archive_write_free);
  archive_write_set_format_pax_restricted(a.get());
  if (compression == Compression::kGzip) {
    archive_write_add_filter_gzip(a.get());
  } else if (compression == Compression::kZstd) {
    archive_write_add_filter_zstd(a.get());
  }
  if (archive_write_open_filename(a.get(), path.c_str()) != ARCHIVE_OK) {
    return absl::InternalError(archive_error_string(a.get()));
  }
  for (const Entry& e : entries_) {
    std::unique_ptr<archive_entry, decltype(&archive_entry_free)> entry(archive_entry_new(),
                                                                        archive_entry_free);
    archive_entry_set_pathname(entry.get(), e.path.c_str());
    archive_entry_set_uid(entry.get(), e.uid);
    archive_entry_set_gid(entry.get(), e.gid);
    archive_entry_set_perm(entry.get(), static_cast<mode_t>(e.mode));
    archive_entry_set_mtime(entry.get(), 1700000000, 0);
    if (e.hardlink) {
      archive_entry_set_filetype(entry.get(), AE_IFREG);
      archive_entry_set_hardlink(entry.get(), e.link.c_str());
    } else {
      archive_entry_set_filetype(entry.get(), static_cast<unsigned>(e.type));
    }
    if (e.type == AE_IFLNK) {
      archive_entry_set_symlink(entry.get(), e.link.c_str());
    }
    if (e.type == AE_IFCHR) {
      archive_entry_set_rdev(entry.get(), makedev(e.rdev_major, e.rdev_minor));
    }
    if (!e.xattr.empty()) {
      archive_entry_xattr_add_entry(entry.get(), e.xattr.c_str(), e.xattr_value.data(),
                                    e.xattr_value.size());
    }
    if (e.type == AE_IFREG && !e.hardlink) {
      archive_entry_set_size(entry.get(), static_cast<la_int64_t>(e.content.size()));
    }
    if (archive_write_header(a.get(), entry.get()) != ARCHIVE_OK ||
        (!e.content.empty() &&
         archive_write_data(a.get(), e.content.data(), e.content.size()) < 0)) {
      return absl::InternalError(archive_error_string(a.get()));
    }
  }
  if (archive_write_close(a.get()) != ARCHIVE_OK) {
    return absl::InternalError(archive_error_string(a.get()));
  }
  return FileSha256(path);
}

absl::StatusOr<std::string> FileSha256(const std::string& path) {
  absl::StatusOr<std::string> bytes = ReadFile(path);
  if (!bytes.ok()) {
    return bytes.status();
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(bytes->data(), bytes->size(), digest, &length, EVP_sha256(), nullptr);
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) {
    absl::StrAppend(&hex, absl::Hex(digest[i], absl::kZeroPad2));
  }
  return hex;
}

}  // namespace gpuaas::agent::testing
