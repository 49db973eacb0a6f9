#include "services/storage/local/upload_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "services/storage/local/dir_reader.h"
#include "services/storage/local/object_meta.h"
#include "services/storage/local/safe_path.h"
#include "services/storage/local/staged_file.h"

namespace gpuaas::storage::local {
namespace {

constexpr std::string_view kMetaMagic = "gpuaas-upload 1\n";
constexpr size_t kMaxMetaBytes = 8192;

bool IsHex(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// "<length>\n<bytes>\n": keys may hold any byte but NUL, newlines included.
void PutField(std::string& out, std::string_view field) {
  absl::StrAppend(&out, field.size(), "\n", std::string(field), "\n");
}

bool TakeField(std::string_view& in, std::string& field) {
  const size_t nl = in.find('\n');
  size_t length = 0;
  if (nl == std::string_view::npos ||
      !absl::SimpleAtoi(absl::string_view(in.data(), nl), &length) ||
      in.size() < nl + 1 + length + 1 || in[nl + 1 + length] != '\n') {
    return false;
  }
  field.assign(in.substr(nl + 1, length));
  in.remove_prefix(nl + 1 + length + 1);
  return true;
}

}  // namespace

std::string NewUploadId() { return RandomStagingName(""); }

bool IsUploadId(std::string_view id) { return id.size() == 32 && IsHex(id); }

std::string PartFileName(int part_number) { return absl::StrFormat("%05d", part_number); }

std::optional<int> ParsePartFileName(std::string_view name) {
  int number = 0;
  if (name.size() != 5 || !std::all_of(name.begin(), name.end(), absl::ascii_isdigit) ||
      !absl::SimpleAtoi(absl::string_view(name.data(), name.size()), &number) || number < 1 ||
      number > kMaxPartNumber) {
    return std::nullopt;
  }
  return number;
}

std::string EncodeUploadMeta(const UploadMeta& meta) {
  std::string out(kMetaMagic);
  PutField(out, absl::StrCat(absl::ToUnixNanos(meta.create_time)));
  PutField(out, meta.key);
  PutField(out, meta.content_type);
  return out;
}

absl::StatusOr<UploadMeta> DecodeUploadMeta(std::string_view data) {
  UploadMeta meta;
  std::string nanos;
  int64_t unix_nanos = 0;
  if (data.substr(0, kMetaMagic.size()) != kMetaMagic) {
    return absl::DataLossError("upload meta: unknown format");
  }
  data.remove_prefix(kMetaMagic.size());
  if (!TakeField(data, nanos) || !absl::SimpleAtoi(nanos, &unix_nanos) ||
      !TakeField(data, meta.key) || !TakeField(data, meta.content_type) || !data.empty()) {
    return absl::DataLossError("upload meta: damaged");
  }
  meta.create_time = absl::FromUnixNanos(unix_nanos);
  return meta;
}

absl::StatusOr<UploadMeta> ReadUploadMeta(int upload_dir_fd) {
  absl::StatusOr<UniqueFd> fd =
      OpenBeneath(upload_dir_fd, kUploadMetaName, O_RDONLY | O_NOFOLLOW, "upload meta");
  if (!fd.ok()) {
    return fd.status();
  }
  std::string data(kMaxMetaBytes, '\0');
  const ssize_t n = ::pread(fd->get(), data.data(), data.size(), 0);
  if (n < 0) {
    return ErrnoStatus(errno, "read upload meta");
  }
  data.resize(static_cast<size_t>(n));
  return DecodeUploadMeta(data);
}

absl::StatusOr<std::vector<PartInfo>> ReadParts(int upload_dir_fd) {
  std::vector<PartInfo> parts;
  absl::Status status = ReadDir(upload_dir_fd, [&](std::string_view name, EntryType type) {
    std::optional<int> number = ParsePartFileName(name);
    if (type != EntryType::kFile || !number.has_value()) {
      return true;
    }
    absl::StatusOr<UniqueFd> fd =
        OpenBeneath(upload_dir_fd, std::string(name), O_RDONLY | O_NOFOLLOW, "part");
    struct stat st;
    if (!fd.ok() || ::fstat(fd->get(), &st) != 0) {
      return true;  // replaced or dropped meanwhile
    }
    const ObjectInfo info = ReadObjectInfo(fd->get(), st, "");
    parts.push_back(PartInfo{*number, info.size, info.etag, info.modify_time});
    return true;
  });
  if (!status.ok()) {
    return status;
  }
  std::sort(parts.begin(), parts.end(),
            [](const PartInfo& a, const PartInfo& b) { return a.part_number < b.part_number; });
  return parts;
}

absl::StatusOr<int64_t> PartBytes(int upload_dir_fd) {
  int64_t bytes = 0;
  absl::Status status = ReadDir(upload_dir_fd, [&](std::string_view name, EntryType type) {
    struct stat st;
    const std::string file(name);
    if (type == EntryType::kFile && ParsePartFileName(name).has_value() &&
        StatNoFollow(upload_dir_fd, file.c_str(), &st).ok()) {
      bytes += st.st_size;
    }
    return true;
  });
  if (!status.ok()) {
    return status;
  }
  return bytes;
}

std::string NormalizeEtag(std::string_view etag) {
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') {
    etag = etag.substr(1, etag.size() - 2);
  }
  return absl::AsciiStrToLower(absl::string_view(etag.data(), etag.size()));
}

std::optional<std::string> Md5FromHex(std::string_view hex) {
  if (hex.size() != 32 || !IsHex(hex)) {
    return std::nullopt;
  }
  std::string raw(16, '\0');
  for (size_t i = 0; i < 16; ++i) {
    const auto digit = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
    raw[i] = static_cast<char>(digit(hex[2 * i]) * 16 + digit(hex[2 * i + 1]));
  }
  return raw;
}

}  // namespace gpuaas::storage::local
