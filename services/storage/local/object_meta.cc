#include "services/storage/local/object_meta.h"

#include <errno.h>
#include <sys/xattr.h>

#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "libs/common/errno_status.h"
#include "libs/common/unique_fd.h"
#include "services/storage/local/md5.h"
#include "services/storage/local/upload_store.h"

namespace gpuaas::storage::local {
namespace {

constexpr char kXattr[] = "user.gpuaas";
constexpr uint8_t kVersion = 1;
// version, size, mtime in ns, MD5, part count (0 for an object written in one piece).
constexpr size_t kFixedBytes = 1 + 8 + 8 + 16 + 2;

struct Meta {
  int64_t size = 0;
  int64_t mtime_nanos = 0;
  std::string md5;  // raw
  uint16_t parts = 0;
  std::string content_type;
};

int64_t MtimeNanos(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

void PutLe(std::string& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) {
    out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
  }
}

uint64_t GetLe(const char* in, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) {
    value |= static_cast<uint64_t>(static_cast<uint8_t>(in[i])) << (8 * i);
  }
  return value;
}

std::optional<Meta> ReadMeta(int fd) {
  char buf[kFixedBytes + kMaxContentTypeBytes];
  const ssize_t n = ::fgetxattr(fd, kXattr, buf, sizeof buf);
  if (n < static_cast<ssize_t>(kFixedBytes) || static_cast<uint8_t>(buf[0]) != kVersion) {
    return std::nullopt;
  }
  Meta meta;
  meta.size = static_cast<int64_t>(GetLe(buf + 1, 8));
  meta.mtime_nanos = static_cast<int64_t>(GetLe(buf + 9, 8));
  meta.md5.assign(buf + 17, 16);
  meta.parts = static_cast<uint16_t>(GetLe(buf + 33, 2));
  meta.content_type.assign(buf + kFixedBytes, static_cast<size_t>(n) - kFixedBytes);
  return meta;
}

std::string EtagOf(const Meta& meta) {
  return meta.parts == 0 ? ToHex(meta.md5) : absl::StrCat(ToHex(meta.md5), "-", meta.parts);
}

}  // namespace

absl::Status WriteObjectMeta(int fd, const struct stat& st, std::string_view etag,
                             std::string_view content_type) {
  const size_t dash = etag.find('-');
  std::optional<std::string> md5 = Md5FromHex(etag.substr(0, dash));
  uint32_t parts = 0;
  if (!md5.has_value() ||
      (dash != std::string_view::npos &&
       (!absl::SimpleAtoi(absl::string_view(etag.data() + dash + 1, etag.size() - dash - 1),
                          &parts) ||
        parts < 1 || parts > static_cast<uint32_t>(kMaxPartNumber)))) {
    return absl::InvalidArgumentError(
        absl::StrCat("etag \"", std::string(etag), "\": neither an MD5 nor a multipart ETag"));
  }
  if (content_type.size() > kMaxContentTypeBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("content_type: at most ", kMaxContentTypeBytes, " bytes"));
  }
  std::string value;
  value.reserve(kFixedBytes + content_type.size());
  value.push_back(static_cast<char>(kVersion));
  PutLe(value, static_cast<uint64_t>(st.st_size), 8);
  PutLe(value, static_cast<uint64_t>(MtimeNanos(st)), 8);
  value.append(*md5);
  PutLe(value, parts, 2);
  value.append(content_type);
  if (::fsetxattr(fd, kXattr, value.data(), value.size(), 0) != 0) {
    if (errno == ENOTSUP || errno == EOPNOTSUPP) {
      return absl::OkStatus();
    }
    return ErrnoStatus(errno, "record the ETag");
  }
  return absl::OkStatus();
}

std::optional<std::string> FreshEtag(int fd, const struct stat& st) {
  std::optional<Meta> meta = ReadMeta(fd);
  if (!meta.has_value() || meta->size != st.st_size || meta->mtime_nanos != MtimeNanos(st)) {
    return std::nullopt;
  }
  return EtagOf(*meta);
}

std::string OpaqueEtag(const struct stat& st) {
  Md5 md5;
  md5.Update(absl::StrCat("gpuaas-opaque ", st.st_dev, " ", st.st_ino, " ", st.st_size, " ",
                          MtimeNanos(st), " ", st.st_ctim.tv_sec, " ", st.st_ctim.tv_nsec));
  return absl::StrCat(ToHex(md5.Digest()), "-1");
}

ObjectInfo ReadObjectInfo(int fd, const struct stat& st, std::string key) {
  ObjectInfo info;
  info.key = std::move(key);
  info.size = st.st_size;
  info.modify_time = absl::TimeFromTimespec(st.st_mtim);
  std::optional<Meta> meta = ReadMeta(fd);
  const bool fresh =
      meta.has_value() && meta->size == st.st_size && meta->mtime_nanos == MtimeNanos(st);
  info.etag = fresh ? EtagOf(*meta) : OpaqueEtag(st);
  if (meta.has_value()) {
    info.content_type = std::move(meta->content_type);
  }
  return info;
}

}  // namespace gpuaas::storage::local
