// Subvolumes' snapshot commands of the mgr's volumes module (Ceph 16's spelling).
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "services/storage/ceph/subvolumes.h"

namespace gpuaas::storage::ceph {
namespace {

nlohmann::json SnapshotCommand(std::string_view prefix, const std::string& fs,
                               std::string_view name, std::string_view snapshot) {
  return {{"prefix", prefix},
          {"vol_name", fs},
          {"sub_name", name},
          {"snap_name", snapshot},
          {"format", "json"}};
}

std::string SnapshotWhat(std::string_view verb, std::string_view name, std::string_view snapshot) {
  return absl::StrCat(std::string(verb), " snapshot ", std::string(snapshot), " of subvolume ",
                      std::string(name));
}

}  // namespace

absl::Status Subvolumes::CreateSnapshot(std::string_view name, std::string_view snapshot) {
  const nlohmann::json cmd =
      SnapshotCommand("fs subvolume snapshot create", fs_name_, name, snapshot);
  return MgrCommand(cmd.dump(), SnapshotWhat("create", name, snapshot)).status();
}

absl::StatusOr<std::vector<std::string>> Subvolumes::ListSnapshots(std::string_view name) {
  const nlohmann::json cmd = {{"prefix", "fs subvolume snapshot ls"},
                              {"vol_name", fs_name_},
                              {"sub_name", name},
                              {"format", "json"}};
  const std::string what = absl::StrCat("list snapshots of subvolume ", std::string(name));
  absl::StatusOr<std::string> out = MgrCommand(cmd.dump(), what);
  if (!out.ok()) {
    return out.status();
  }
  const nlohmann::json listed = nlohmann::json::parse(*out, nullptr, /*allow_exceptions=*/false);
  if (!listed.is_array()) {
    return absl::InternalError(absl::StrCat(what, ": the mgr answered no JSON array"));
  }
  std::vector<std::string> names;
  for (const nlohmann::json& entry : listed) {
    if (entry.is_object() && entry.contains("name") && entry["name"].is_string()) {
      names.push_back(entry["name"].get<std::string>());
    }
  }
  return names;
}

absl::StatusOr<Subvolumes::SnapshotDetails> Subvolumes::SnapshotInfo(std::string_view name,
                                                                     std::string_view snapshot) {
  const nlohmann::json cmd =
      SnapshotCommand("fs subvolume snapshot info", fs_name_, name, snapshot);
  const std::string what = SnapshotWhat("describe", name, snapshot);
  absl::StatusOr<std::string> out = MgrCommand(cmd.dump(), what);
  if (!out.ok()) {
    return out.status();
  }
  const nlohmann::json info = nlohmann::json::parse(*out, nullptr, /*allow_exceptions=*/false);
  if (!info.is_object()) {
    return absl::InternalError(absl::StrCat(what, ": the mgr answered no JSON object"));
  }
  SnapshotDetails details;
  if (info.contains("size") && info["size"].is_number_integer()) {
    details.bytes = info["size"].get<int64_t>();
  }
  // "2026-11-29 12:00:00.123456", the mgr host's local time (Ceph 16 formats it so); our
  // clusters run in UTC.
  if (info.contains("created_at") && info["created_at"].is_string()) {
    std::string error;
    if (!absl::ParseTime("%Y-%m-%d %H:%M:%E*S", info["created_at"].get<std::string>(),
                         absl::UTCTimeZone(), &details.created, &error)) {
      return absl::InternalError(absl::StrCat(what, ": created_at: ", error));
    }
  }
  return details;
}

absl::Status Subvolumes::RemoveSnapshot(std::string_view name, std::string_view snapshot) {
  const nlohmann::json cmd = SnapshotCommand("fs subvolume snapshot rm", fs_name_, name, snapshot);
  return MgrCommand(cmd.dump(), SnapshotWhat("remove", name, snapshot)).status();
}

}  // namespace gpuaas::storage::ceph
