#include "services/storage/ceph/subvolumes.h"

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace gpuaas::storage::ceph {
namespace {

// A command's JSON with the file system and subvolume filled in.
nlohmann::json SubvolumeCommand(std::string_view prefix, const std::string& fs,
                                std::string_view name) {
  return {{"prefix", prefix}, {"vol_name", fs}, {"sub_name", name}, {"format", "json"}};
}

}  // namespace

absl::Status Subvolumes::Create(std::string_view name, int64_t bytes) {
  nlohmann::json cmd = SubvolumeCommand("fs subvolume create", fs_name_, name);
  cmd["size"] = bytes;
  cmd["mode"] = "0755";
  // Its file data in a RADOS namespace of its own: a node's credential for it (`fs subvolume
  // authorize`) then reaches that namespace only, not every volume's objects in the data pool.
  cmd["namespace_isolated"] = true;
  return MgrCommand(cmd.dump(), absl::StrCat("create subvolume ", std::string(name))).status();
}

absl::Status Subvolumes::Resize(std::string_view name, int64_t bytes) {
  nlohmann::json cmd = SubvolumeCommand("fs subvolume resize", fs_name_, name);
  cmd["new_size"] = absl::StrCat(bytes);
  cmd["no_shrink"] = true;
  return MgrCommand(cmd.dump(), absl::StrCat("resize subvolume ", std::string(name))).status();
}

absl::Status Subvolumes::Remove(std::string_view name) {
  nlohmann::json cmd = SubvolumeCommand("fs subvolume rm", fs_name_, name);
  cmd["force"] = true;
  absl::Status status =
      MgrCommand(cmd.dump(), absl::StrCat("remove subvolume ", std::string(name))).status();
  return absl::IsNotFound(status) ? absl::OkStatus() : status;
}

absl::StatusOr<std::string> Subvolumes::Path(std::string_view name) {
  nlohmann::json cmd = SubvolumeCommand("fs subvolume getpath", fs_name_, name);
  cmd.erase("format");  // getpath answers the bare path
  absl::StatusOr<std::string> path =
      MgrCommand(cmd.dump(), absl::StrCat("subvolume ", std::string(name)));
  if (!path.ok()) {
    return path.status();
  }
  std::string trimmed(absl::StripAsciiWhitespace(*path));
  if (!trimmed.starts_with("/")) {
    return absl::InternalError(
        absl::StrCat("subvolume ", std::string(name), ": getpath answered \"", trimmed, "\""));
  }
  return trimmed;
}

absl::StatusOr<std::vector<std::string>> Subvolumes::List() {
  const nlohmann::json cmd = {
      {"prefix", "fs subvolume ls"}, {"vol_name", fs_name_}, {"format", "json"}};
  absl::StatusOr<std::string> out = MgrCommand(cmd.dump(), "list subvolumes");
  if (!out.ok()) {
    return out.status();
  }
  std::vector<std::string> names;
  const nlohmann::json listed = nlohmann::json::parse(*out, nullptr, /*allow_exceptions=*/false);
  if (!listed.is_array()) {
    return absl::InternalError("list subvolumes: the mgr answered no JSON array");
  }
  for (const nlohmann::json& entry : listed) {
    if (entry.is_object() && entry.contains("name") && entry["name"].is_string()) {
      names.push_back(entry["name"].get<std::string>());
    }
  }
  return names;
}

}  // namespace gpuaas::storage::ceph
