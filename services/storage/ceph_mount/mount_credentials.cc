#include "services/storage/ceph_mount/mount_credentials.h"

#include <cerrno>
#include <nlohmann/json.hpp>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace gpuaas::storage::ceph_mount {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kClientIdPrefix = "gpuaas-att-";
constexpr size_t kMaxAttachmentId = 64;
constexpr std::string_view kCephTenant = "gpuaas";

absl::Status ValidateAttachmentId(std::string_view id) {
  if (id.empty() || id.size() > kMaxAttachmentId) {
    return absl::InvalidArgumentError("attachment_id must be 1 to 64 characters");
  }
  for (char c : id) {
    if (!(absl::ascii_islower(c) || absl::ascii_isdigit(c) || c == '-')) {
      return absl::InvalidArgumentError("attachment_id must be [a-z0-9-]");
    }
  }
  return absl::OkStatus();
}

// The volumes module's commands name the subvolume and the id the same way.
Json SubvolumeCommand(std::string_view prefix, std::string_view fs_name, std::string_view volume_id,
                      std::string_view attachment_id) {
  return Json{{"prefix", prefix},
              {"vol_name", fs_name},
              {"sub_name", volume_id},
              {"auth_id", CephClientId(attachment_id)}};
}

}  // namespace

std::string CephClientId(std::string_view attachment_id) {
  return std::string(kClientIdPrefix) + std::string(attachment_id);
}

MountCredentials::MountCredentials(MgrCommand mgr, EvictSessions evict, std::string fs_name)
    : mgr_(std::move(mgr)), evict_(std::move(evict)), fs_name_(std::move(fs_name)) {}

absl::StatusOr<MountCredential> MountCredentials::Grant(std::string_view volume_id,
                                                        std::string_view attachment_id,
                                                        bool read_only) {
  if (absl::Status valid = ValidateAttachmentId(attachment_id); !valid.ok()) return valid;
  Json cmd = SubvolumeCommand("fs subvolume authorize", fs_name_, volume_id, attachment_id);
  cmd["access_level"] = read_only ? "r" : "rw";
  // The volumes module hands out the key only to callers that name a tenant, and refuses an id
  // made under another: every id of ours is the platform's, and only ids it made are answered.
  cmd["tenant_id"] = kCephTenant;
  // An id that exists with exactly these caps (a retry) is answered again with its key.
  absl::StatusOr<std::string> key = mgr_(cmd.dump());
  if (!key.ok()) return key.status();
  std::string trimmed(absl::StripAsciiWhitespace(*key));
  if (trimmed.empty()) {
    // The volumes module answers no key for an id another tenant (or not it) made.
    return absl::FailedPreconditionError(absl::StrCat("cephx id ", CephClientId(attachment_id),
                                                      " exists and was not made for this volume"));
  }
  return MountCredential{.client_id = CephClientId(attachment_id), .key = std::move(trimmed)};
}

absl::Status MountCredentials::Revoke(std::string_view volume_id, std::string_view attachment_id) {
  if (absl::Status valid = ValidateAttachmentId(attachment_id); !valid.ok()) return valid;
  // Caps first, so an evicted client cannot come back; then cut off the mounted ones.
  absl::StatusOr<std::string> deauthorized =
      mgr_(SubvolumeCommand("fs subvolume deauthorize", fs_name_, volume_id, attachment_id).dump());
  if (!deauthorized.ok() && !absl::IsNotFound(deauthorized.status())) {
    return deauthorized.status();
  }
  absl::StatusOr<std::string> evicted =
      mgr_(SubvolumeCommand("fs subvolume evict", fs_name_, volume_id, attachment_id).dump());
  if (!evicted.ok() && !absl::IsNotFound(evicted.status())) return evicted.status();
  // The id's sessions mounted elsewhere than the subvolume's root, which that missed.
  return evict_(CephClientId(attachment_id));
}

}  // namespace gpuaas::storage::ceph_mount
