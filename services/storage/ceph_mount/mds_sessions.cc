#include "services/storage/ceph_mount/mds_sessions.h"

#include <cephfs/libcephfs.h>

#include <nlohmann/json.hpp>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace gpuaas::storage::ceph_mount {

absl::StatusOr<std::unique_ptr<MdsSessions>> MdsSessions::Connect(const RadosConfig& config,
                                                                  std::string_view fs_name) {
  ceph_mount_info* cmount = nullptr;
  if (int rc = ceph_create(&cmount, config.client_id.c_str()); rc < 0) {
    return RadosErrorToStatus(rc, "ceph_create", "");
  }
  auto fail = [&](int rc, const std::string& what) {
    ceph_shutdown(cmount);
    return RadosErrorToStatus(rc, what, "");
  };
  if (int rc = ceph_conf_read_file(cmount, config.conf_path.c_str()); rc < 0) {
    return fail(rc, "reading " + config.conf_path);
  }
  const std::string timeout = absl::StrCat(absl::ToInt64Seconds(config.timeout));
  for (const auto& [name, value] :
       {std::pair<const char*, const char*>{"keyring", config.keyring_path.c_str()},
        {"client_mount_timeout", timeout.c_str()},
        {"log_to_stderr", "false"},
        {"log_file", ""}}) {
    if (int rc = ceph_conf_set(cmount, name, value); rc < 0) {
      return fail(rc, std::string("setting ") + name);
    }
  }
  if (int rc = ceph_select_filesystem(cmount, std::string(fs_name).c_str()); rc < 0) {
    return fail(rc, "selecting the file system");
  }
  if (int rc = ceph_init(cmount); rc < 0) {
    absl::Status s = fail(rc, "connecting to the cluster");
    return absl::UnavailableError(s.message());
  }
  return std::unique_ptr<MdsSessions>(new MdsSessions(cmount));
}

MdsSessions::~MdsSessions() { ceph_shutdown(static_cast<ceph_mount_info*>(cmount_)); }

absl::Status MdsSessions::EvictAuthId(std::string_view auth_id) {
  if (auth_id.empty()) return absl::InvalidArgumentError("auth_id is empty");
  for (char c : auth_id) {
    if (!(absl::ascii_islower(c) || absl::ascii_isdigit(c) || c == '-')) {
      // The filter is parsed by the MDS: nothing that could add another term.
      return absl::InvalidArgumentError("auth_id must be [a-z0-9-]");
    }
  }
  const std::string cmd =
      nlohmann::json{{"prefix", "session evict"},
                     {"filters", nlohmann::json::array({"auth_name=" + std::string(auth_id)})}}
          .dump();
  const char* cmds[] = {cmd.c_str()};
  char* out = nullptr;
  size_t out_len = 0;
  char* status = nullptr;
  size_t status_len = 0;
  int rc = ceph_mds_command(static_cast<ceph_mount_info*>(cmount_), "*", cmds, 1, "", 0, &out,
                            &out_len, &status, &status_len);
  std::string message(status == nullptr ? "" : std::string(status, status_len));
  ceph_buffer_free(out);
  ceph_buffer_free(status);
  if (rc < 0) return RadosErrorToStatus(rc, "mds session evict", message);
  return absl::OkStatus();
}

}  // namespace gpuaas::storage::ceph_mount
