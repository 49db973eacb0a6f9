#include "services/storage/local/object_meta.h"

#include <errno.h>
#include <sys/xattr.h>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "services/storage/local/md5.h"
#include "services/storage/local/unique_fd.h"

namespace gpuaas::storage::local {
namespace {

constexpr char kEtagXattr[] = "user.gpuaas.etag";
constexpr char kContentTypeXattr[] = "user.gpuaas.content_type";

// "<size> <mtime seconds> <mtime nanoseconds> <etag>"
std::string Stamp(const struct stat& st) {
  return absl::StrCat(st.st_size, " ", st.st_mtim.tv_sec, " ", st.st_mtim.tv_nsec);
}

bool Unsupported(int err) { return err == ENOTSUP || err == EOPNOTSUPP; }

std::optional<std::string> GetXattr(int fd, const char* name) {
  char buf[kMaxContentTypeBytes + 64];
  const ssize_t n = ::fgetxattr(fd, name, buf, sizeof buf);
  if (n < 0) {
    return std::nullopt;
  }
  return std::string(buf, static_cast<size_t>(n));
}

}  // namespace

absl::Status WriteObjectMeta(int fd, const struct stat& st, std::string_view etag,
                             std::string_view content_type) {
  const std::string value = absl::StrCat(Stamp(st), " ", std::string(etag));
  if (::fsetxattr(fd, kEtagXattr, value.data(), value.size(), 0) != 0) {
    if (Unsupported(errno)) {
      return absl::OkStatus();
    }
    return ErrnoStatus(errno, "record the ETag");
  }
  if (!content_type.empty() &&
      ::fsetxattr(fd, kContentTypeXattr, content_type.data(), content_type.size(), 0) != 0) {
    return ErrnoStatus(errno, "record the content type");
  }
  return absl::OkStatus();
}

std::optional<std::string> FreshEtag(int fd, const struct stat& st) {
  std::optional<std::string> value = GetXattr(fd, kEtagXattr);
  if (!value.has_value()) {
    return std::nullopt;
  }
  const std::string stamp = Stamp(st);
  if (value->size() <= stamp.size() + 1 || value->compare(0, stamp.size(), stamp) != 0 ||
      (*value)[stamp.size()] != ' ') {
    return std::nullopt;
  }
  return value->substr(stamp.size() + 1);
}

std::string OpaqueEtag(const struct stat& st) {
  Md5 md5;
  md5.Update(absl::StrCat("gpuaas-opaque ", st.st_dev, " ", st.st_ino, " ", Stamp(st), " ",
                          st.st_ctim.tv_sec, " ", st.st_ctim.tv_nsec));
  return absl::StrCat(ToHex(md5.Digest()), "-1");
}

ObjectInfo ReadObjectInfo(int fd, const struct stat& st, std::string key, bool with_content_type) {
  ObjectInfo info;
  info.key = std::move(key);
  info.size = st.st_size;
  info.modify_time = absl::TimeFromTimespec(st.st_mtim);
  std::optional<std::string> etag = FreshEtag(fd, st);
  info.etag = etag.has_value() ? *std::move(etag) : OpaqueEtag(st);
  if (with_content_type) {
    info.content_type = GetXattr(fd, kContentTypeXattr).value_or("");
  }
  return info;
}

}  // namespace gpuaas::storage::local
