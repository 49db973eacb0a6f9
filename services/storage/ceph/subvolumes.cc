#include "services/storage/ceph/subvolumes.h"

#include <errno.h>
#include <rados/librados.h>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace gpuaas::storage::ceph {
namespace {

rados_t Handle(void* cluster) { return static_cast<rados_t>(cluster); }

// A librados error (a negative errno) as a status saying what failed and Ceph's own message.
absl::Status RadosStatus(int ret, std::string_view what, std::string_view message) {
  std::string text = absl::StrCat(std::string(what), ": ",
                                  message.empty() ? strerror(-ret) : std::string(message));
  switch (-ret) {
    case ENOENT:
      return absl::NotFoundError(text);
    case EEXIST:
      return absl::AlreadyExistsError(text);
    case EINVAL:
    case ERANGE:
      return absl::InvalidArgumentError(text);
    case EPERM:
    case EACCES:
      return absl::PermissionDeniedError(text);
    case EDQUOT:
    case ENOSPC:
      return absl::ResourceExhaustedError(text);
    case ETIMEDOUT:
    case ENOTCONN:
    case ESHUTDOWN:
    case EAGAIN:
    case ECONNREFUSED:
      return absl::UnavailableError(text);
    default:
      return absl::InternalError(text);
  }
}

// A command's JSON with the file system and subvolume filled in.
nlohmann::json SubvolumeCommand(std::string_view prefix, const std::string& fs,
                                std::string_view name) {
  return {{"prefix", prefix}, {"vol_name", fs}, {"sub_name", name}, {"format", "json"}};
}

}  // namespace

absl::StatusOr<std::unique_ptr<Subvolumes>> Subvolumes::Connect(const ClusterOptions& options,
                                                                std::string fs_name) {
  rados_t cluster = nullptr;
  const std::string name = absl::StrCat("client.", options.client_id);
  if (int r = rados_create2(&cluster, "ceph", name.c_str(), 0); r < 0) {
    return RadosStatus(r, "client id " + options.client_id, "");
  }
  std::unique_ptr<Subvolumes> self(new Subvolumes(cluster, std::move(fs_name)));
  if (int r = rados_conf_read_file(cluster, options.conf_path.c_str()); r < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("conf ", options.conf_path, ": cannot be read (", strerror(-r), ")"));
  }
  const std::string timeout = absl::StrCat(absl::ToInt64Seconds(options.timeout));
  for (const auto& [key, value] :
       {std::pair<const char*, std::string>{"keyring", options.keyring_path},
        {"rados_mon_op_timeout", timeout},
        {"rados_osd_op_timeout", timeout},
        {"client_mount_timeout", timeout},
        // librados logs to stderr and the conf's log file otherwise
        {"log_to_stderr", "false"},
        {"err_to_stderr", "false"}}) {
    if (int r = rados_conf_set(cluster, key, value.c_str()); r < 0) {
      return RadosStatus(r, absl::StrCat("ceph option ", key), "");
    }
  }
  if (int r = rados_connect(cluster); r < 0) {
    if (r == -ENOENT || r == -EINVAL || r == -EACCES || r == -EPERM) {
      return absl::InvalidArgumentError(absl::StrCat(
          "keyring ", options.keyring_path, ": no usable key for ", name, " (", strerror(-r), ")"));
    }
    return RadosStatus(r, "connect to the Ceph cluster of " + options.conf_path, "");
  }
  return self;
}

Subvolumes::~Subvolumes() { rados_shutdown(Handle(cluster_)); }

absl::StatusOr<std::string> Subvolumes::MgrCommand(const std::string& json, std::string_view what) {
  const char* cmd[] = {json.c_str()};
  char* out = nullptr;
  size_t out_len = 0;
  char* status = nullptr;
  size_t status_len = 0;
  const int r =
      rados_mgr_command(Handle(cluster_), cmd, 1, "", 0, &out, &out_len, &status, &status_len);
  std::string output(out != nullptr ? out : "", out_len);
  std::string message(status != nullptr ? status : "", status_len);
  rados_buffer_free(out);
  rados_buffer_free(status);
  if (r < 0) {
    return RadosStatus(r, what, std::string(absl::StripAsciiWhitespace(message)));
  }
  return output;
}

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
