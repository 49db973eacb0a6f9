// How a multipart upload lies on disk, outside its volume: uploads/<storage_id>/<upload_id>/
// holds "meta" (the key, content type and creation time) and one file per part, named by its
// number ("00001"), with the part's MD5 recorded like an object's ETag (object_meta.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "services/storage/backend.h"

namespace gpuaas::storage::local {

inline constexpr int kMaxPartNumber = 10000;
inline constexpr int64_t kMinPartBytes = int64_t{5} << 20;
inline constexpr char kUploadMetaName[] = "meta";

struct UploadMeta {
  std::string key;
  std::string content_type;
  absl::Time create_time;
};

// 128 random bits in lowercase hex.
std::string NewUploadId();
bool IsUploadId(std::string_view id);

std::string PartFileName(int part_number);
std::optional<int> ParsePartFileName(std::string_view name);

std::string EncodeUploadMeta(const UploadMeta& meta);
absl::StatusOr<UploadMeta> DecodeUploadMeta(std::string_view data);
// The upload's meta from its directory; NOT_FOUND when it is missing, DATA_LOSS when unreadable.
absl::StatusOr<UploadMeta> ReadUploadMeta(int upload_dir_fd);

// The parts in the upload's directory, ascending by number, with their ETags.
absl::StatusOr<std::vector<PartInfo>> ReadParts(int upload_dir_fd);
// What the parts in the upload's directory hold together (what they count against the limits).
absl::StatusOr<int64_t> PartBytes(int upload_dir_fd);

// An ETag as a client sends it back: without quotes, lowercase.
std::string NormalizeEtag(std::string_view etag);
// The raw 16 bytes of an MD5 hex ETag; nullopt for anything else.
std::optional<std::string> Md5FromHex(std::string_view hex);

}  // namespace gpuaas::storage::local
