#include "services/storage/ceph_mount/rados_mgr.h"

#include <errno.h>
#include <rados/librados.h>
#include <string.h>

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace gpuaas::storage::ceph_mount {

absl::Status RadosErrorToStatus(int rc, std::string_view what, std::string_view message) {
  const std::string text =
      absl::StrCat(std::string(what), ": ", message.empty() ? strerror(-rc) : std::string(message),
                   " (errno ", -rc, ")");
  switch (-rc) {
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

absl::StatusOr<std::unique_ptr<RadosMgr>> RadosMgr::Connect(const RadosConfig& config) {
  rados_t cluster = nullptr;
  const std::string name = absl::StrCat("client.", config.client_id);
  if (int rc = rados_create2(&cluster, "ceph", name.c_str(), 0); rc < 0) {
    return RadosErrorToStatus(rc, "client id " + config.client_id, "");
  }
  std::unique_ptr<RadosMgr> self(new RadosMgr(cluster));
  if (int rc = rados_conf_read_file(cluster, config.conf_path.c_str()); rc < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("conf ", config.conf_path, ": cannot be read (", strerror(-rc), ")"));
  }
  const std::string timeout = absl::StrCat(absl::ToInt64Seconds(config.timeout));
  for (const auto& [key, value] :
       {std::pair<const char*, std::string>{"keyring", config.keyring_path},
        {"rados_mon_op_timeout", timeout},
        {"rados_osd_op_timeout", timeout},
        {"client_mount_timeout", timeout},
        // The conf's log settings are the daemons'; librados would log to stderr and there.
        {"log_to_stderr", "false"},
        {"err_to_stderr", "false"},
        {"log_file", ""}}) {
    if (int rc = rados_conf_set(cluster, key, value.c_str()); rc < 0) {
      return RadosErrorToStatus(rc, absl::StrCat("ceph option ", key), "");
    }
  }
  if (int rc = rados_connect(cluster); rc < 0) {
    if (rc == -ENOENT || rc == -EINVAL || rc == -EACCES || rc == -EPERM) {
      return absl::InvalidArgumentError(absl::StrCat(
          "keyring ", config.keyring_path, ": no usable key for ", name, " (", strerror(-rc), ")"));
    }
    return absl::UnavailableError(
        RadosErrorToStatus(rc, "connect to the Ceph cluster of " + config.conf_path, "").message());
  }
  return self;
}

RadosMgr::~RadosMgr() { rados_shutdown(static_cast<rados_t>(cluster_)); }

absl::StatusOr<std::string> RadosMgr::Command(std::string_view json, std::string_view what) {
  const std::string cmd(json);
  const char* cmds[] = {cmd.c_str()};
  char* out = nullptr;
  size_t out_len = 0;
  char* status = nullptr;
  size_t status_len = 0;
  const int rc = rados_mgr_command(static_cast<rados_t>(cluster_), cmds, 1, "", 0, &out, &out_len,
                                   &status, &status_len);
  std::string output(out == nullptr ? "" : std::string(out, out_len));
  std::string message(status == nullptr ? "" : std::string(status, status_len));
  rados_buffer_free(out);
  rados_buffer_free(status);
  if (rc < 0) return RadosErrorToStatus(rc, what, std::string(absl::StripAsciiWhitespace(message)));
  return output;
}

std::string RadosMgr::MonHost() const {
  char buf[1024] = {};
  if (rados_conf_get(static_cast<rados_t>(cluster_), "mon_host", buf, sizeof(buf)) < 0) return "";
  return buf;
}

}  // namespace gpuaas::storage::ceph_mount
