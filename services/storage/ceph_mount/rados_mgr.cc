#include "services/storage/ceph_mount/rados_mgr.h"

#include <rados/librados.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "services/storage/ceph_mount/mount_credentials.h"

namespace gpuaas::storage::ceph_mount {
namespace {

constexpr const char* kTimeoutSeconds = "10";

}  // namespace

absl::StatusOr<std::unique_ptr<RadosMgr>> RadosMgr::Connect(const RadosConfig& config) {
  rados_t cluster = nullptr;
  if (int rc = rados_create(&cluster, config.client_id.c_str()); rc < 0) {
    return RadosErrorToStatus(rc, "rados_create", "");
  }
  auto fail = [&](int rc, std::string_view what) {
    rados_shutdown(cluster);
    return RadosErrorToStatus(rc, what, "");
  };
  if (int rc = rados_conf_read_file(cluster, config.conf_path.c_str()); rc < 0) {
    return fail(rc, "reading " + config.conf_path);
  }
  for (const auto& [name, value] :
       {std::pair<const char*, const char*>{"keyring", config.keyring_path.c_str()},
        {"client_mount_timeout", kTimeoutSeconds},
        {"rados_mon_op_timeout", kTimeoutSeconds},
        {"rados_osd_op_timeout", kTimeoutSeconds},
        // The mgr's own log settings from ceph.conf are no business of this process.
        {"log_to_stderr", "false"},
        {"log_file", ""}}) {
    if (int rc = rados_conf_set(cluster, name, value); rc < 0) {
      return fail(rc, std::string("setting ") + name);
    }
  }
  if (int rc = rados_connect(cluster); rc < 0) {
    absl::Status s = fail(rc, "connecting to the cluster");
    return absl::UnavailableError(s.message());
  }
  return std::unique_ptr<RadosMgr>(new RadosMgr(cluster));
}

RadosMgr::~RadosMgr() { rados_shutdown(static_cast<rados_t>(cluster_)); }

absl::StatusOr<std::string> RadosMgr::Command(std::string_view json) {
  const std::string cmd(json);
  const char* cmds[] = {cmd.c_str()};
  char* out = nullptr;
  size_t out_len = 0;
  char* status = nullptr;
  size_t status_len = 0;
  int rc = rados_mgr_command(static_cast<rados_t>(cluster_), cmds, 1, "", 0, &out, &out_len,
                             &status, &status_len);
  std::string output(out == nullptr ? "" : std::string(out, out_len));
  std::string message(status == nullptr ? "" : std::string(status, status_len));
  rados_buffer_free(out);
  rados_buffer_free(status);
  if (rc < 0) return RadosErrorToStatus(rc, "mgr command", message);
  return output;
}

std::string RadosMgr::MonHost() const {
  char buf[1024] = {};
  if (rados_conf_get(static_cast<rados_t>(cluster_), "mon_host", buf, sizeof(buf)) < 0) return "";
  return buf;
}

}  // namespace gpuaas::storage::ceph_mount
