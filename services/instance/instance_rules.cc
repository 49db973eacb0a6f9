#include "services/instance/instance_rules.h"

#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "libs/common/status_macros.h"
#include "libs/service/validate.h"

namespace gpuaas::instance {
namespace {

constexpr size_t kMaxCmd = 64 << 10;
constexpr size_t kMaxEnvValue = 32 << 10;
// All envs together: they and the cmd must fit one execve (ARG_MAX, 2 MiB on Linux), or the
// workload would fail to start instead of the request being refused.
constexpr size_t kMaxEnvTotal = 256 << 10;
constexpr int kMaxPorts = 16;
constexpr int kMaxEnvs = 128;
constexpr int kMaxVolumes = 16;
constexpr size_t kMaxPath = 1024;

absl::Status Bad(std::string_view field, std::string_view why) {
  return service::InvalidField(field, why);
}

std::string At(std::string_view field, std::string_view part, int i) {
  return absl::StrCat(std::string(field), ".", std::string(part), "[", i, "]");
}

absl::Duration FromProto(const google::protobuf::Duration& d) {
  return absl::Seconds(d.seconds()) + absl::Nanoseconds(d.nanos());
}

bool IsIdentifier(std::string_view s) {
  if (s.empty() || s.size() > 128 || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

// Absolute (or, for sub_path, relative) and normalized: no empty, "." or ".." parts.
absl::Status ValidatePath(std::string_view field, std::string_view path, bool absolute) {
  if (path.size() > kMaxPath) return Bad(field, "longer than 1024 bytes");
  if (absolute && (path.empty() || path[0] != '/')) return Bad(field, "must be an absolute path");
  if (!absolute && !path.empty() && path[0] == '/') return Bad(field, "must be a relative path");
  if (path.find('\0') != std::string_view::npos) return Bad(field, "holds a NUL byte");
  std::string_view rest = absolute ? path.substr(1) : path;
  if (rest.empty()) return absl::OkStatus();
  for (absl::string_view part : absl::StrSplit(absl::string_view(rest.data(), rest.size()), '/')) {
    if (part.empty() || part == "." || part == "..") {
      return Bad(field, "must be normalized (no empty, \".\" or \"..\" parts)");
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateInstanceId(std::string_view field, std::string_view id) {
  if (id.empty() || id.size() > 63) return Bad(field, "must be 1 to 63 characters");
  if (!std::islower(static_cast<unsigned char>(id[0])))
    return Bad(field, "must start with a letter");
  if (id.back() == '-') return Bad(field, "must not end with '-'");
  for (char c : id) {
    if (!(std::islower(static_cast<unsigned char>(c)) ||
          std::isdigit(static_cast<unsigned char>(c)) || c == '-')) {
      return Bad(field, "may hold only a-z, 0-9 and '-'");
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateTemplate(std::string_view field, const pb::Template& t, bool need_cmd) {
  const std::string f(field);
  if (t.cmd().size() > kMaxCmd) return Bad(f + ".cmd", "longer than 64 KiB");
  if (need_cmd && t.cmd().empty()) {
    return Bad(f + ".cmd", "required (give one, or an image with a command)");
  }
  if (t.ports_size() > kMaxPorts) return Bad(f + ".ports", "at most 16 ports");
  std::set<int> ports;
  int probes = 0;
  for (int i = 0; i < t.ports_size(); ++i) {
    const pb::Port& p = t.ports(i);
    if (p.port() < 1 || p.port() > 65535)
      return Bad(At(f, "ports", i) + ".port", "must be 1 to 65535");
    if (!ports.insert(p.port()).second) {
      return Bad(At(f, "ports", i) + ".port", absl::StrCat("port ", p.port(), " appears twice"));
    }
    if (p.is_probe() && ++probes > 1)
      return Bad(At(f, "ports", i) + ".is_probe", "at most one probe port");
    if (!p.base_url().empty()) {
      GPUAAS_RETURN_IF_ERROR(ValidatePath(At(f, "ports", i) + ".base_url", p.base_url(), true));
    }
    if (!pb::Protocol_IsValid(p.protocol())) return Bad(At(f, "ports", i) + ".protocol", "unknown");
  }
  if (t.envs_size() > kMaxEnvs) return Bad(f + ".envs", "at most 128 variables");
  size_t env_bytes = 0;
  for (int i = 0; i < t.envs_size(); ++i) {
    const pb::Env& e = t.envs(i);
    env_bytes += e.name().size() + e.value().size() + 2;
    if (!IsIdentifier(e.name())) {
      return Bad(At(f, "envs", i) + ".name", "must be an identifier ([A-Za-z_][A-Za-z0-9_]*)");
    }
    if (absl::StartsWith(e.name(), "GPUAAS_") || e.name() == "CUDA_VISIBLE_DEVICES" ||
        e.name() == "NVIDIA_VISIBLE_DEVICES") {
      return Bad(At(f, "envs", i) + ".name", "is set by the platform");
    }
    if (e.value().size() > kMaxEnvValue)
      return Bad(At(f, "envs", i) + ".value", "longer than 32 KiB");
  }
  if (env_bytes > kMaxEnvTotal) return Bad(f + ".envs", "more than 256 KiB together");
  if (t.volumes_size() > kMaxVolumes) return Bad(f + ".volumes", "at most 16 volumes");
  std::set<std::string> names, paths;
  for (int i = 0; i < t.volumes_size(); ++i) {
    const pb::Volume& v = t.volumes(i);
    GPUAAS_RETURN_IF_ERROR(ValidateInstanceId(At(f, "volumes", i) + ".name", v.name()));
    if (!names.insert(v.name()).second) return Bad(At(f, "volumes", i) + ".name", "appears twice");
    GPUAAS_RETURN_IF_ERROR(ValidatePath(At(f, "volumes", i) + ".mount_path", v.mount_path(), true));
    if (v.mount_path() == "/") return Bad(At(f, "volumes", i) + ".mount_path", "must not be /");
    for (const char* system : {"/proc", "/dev", "/sys"}) {
      if (v.mount_path() == system || absl::StartsWith(v.mount_path(), absl::StrCat(system, "/"))) {
        return Bad(At(f, "volumes", i) + ".mount_path", absl::StrCat("must not be under ", system));
      }
    }
    if (!paths.insert(v.mount_path()).second) {
      return Bad(At(f, "volumes", i) + ".mount_path", "appears twice");
    }
    GPUAAS_RETURN_IF_ERROR(ValidatePath(At(f, "volumes", i) + ".sub_path", v.sub_path(), false));
  }
  if (t.has_probe_timeout()) {
    const absl::Duration d = FromProto(t.probe_timeout());
    if (d <= absl::ZeroDuration() || d > absl::Hours(1)) {
      return Bad(f + ".probe_timeout", "must be more than 0 and at most 1h");
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateCreate(const pb::CreateInstanceRequest& req, const pb::Template& effective,
                            bool runs_oci_image) {
  if (!req.instance_id().empty()) {
    GPUAAS_RETURN_IF_ERROR(ValidateInstanceId("instance_id", req.instance_id()));
  }
  GPUAAS_RETURN_IF_ERROR(service::ValidateDisplayText("name", req.name()));
  GPUAAS_RETURN_IF_ERROR(service::ValidateRequired("spec_name", req.spec_name()));
  if (!req.tenant_id().empty()) {
    GPUAAS_RETURN_IF_ERROR(service::ValidateSlug("tenant_id", req.tenant_id()));
  }
  // The request's own template first, so its errors name its fields.
  GPUAAS_RETURN_IF_ERROR(ValidateTemplate("template", req.template_(), false));
  // An OCI image brings its own entrypoint and cmd.
  GPUAAS_RETURN_IF_ERROR(ValidateTemplate("template", effective, !runs_oci_image));
  if (effective.volumes_size() > 0 && req.storage_id().empty()) {
    return Bad("storage_id", "required: the template mounts volumes");
  }
  for (const auto& [field, d] : {std::pair{"idle_timeout", &req.idle_timeout()},
                                 std::pair{"max_run_time", &req.max_run_time()}}) {
    const bool set = (field == std::string_view("idle_timeout")) ? req.has_idle_timeout()
                                                                 : req.has_max_run_time();
    if (set && FromProto(*d) < absl::Minutes(1)) return Bad(field, "at least 1m when set");
  }
  return absl::OkStatus();
}

absl::Status ValidateImage(const pb::Image& image) {
  GPUAAS_RETURN_IF_ERROR(ValidateInstanceId("image.name", image.name()));
  const std::string& v = image.version();
  if (v.empty() || v.size() > 63) return Bad("image.version", "must be 1 to 63 characters");
  for (char c : v) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) {
      return Bad("image.version", "may hold only A-Z, a-z, 0-9, '.', '_' and '-'");
    }
  }
  if (image.description().size() > 1024) return Bad("image.description", "longer than 1024 bytes");
  if (image.command().size() > kMaxCmd) return Bad("image.command", "longer than 64 KiB");
  if (image.oci_reference().size() > 1024)
    return Bad("image.oci_reference", "longer than 1024 bytes");
  if (!image.defaults().cmd().empty()) {
    return Bad("image.defaults.cmd", "not used: the image's command is `command`");
  }
  return ValidateTemplate("image.defaults", image.defaults(), false);
}

pb::Template ApplyImage(const pb::Image& image, const pb::Template& requested) {
  pb::Template t = requested;
  if (t.cmd().empty()) t.set_cmd(image.command());
  if (t.ports_size() == 0) *t.mutable_ports() = image.defaults().ports();
  if (t.volumes_size() == 0) *t.mutable_volumes() = image.defaults().volumes();
  if (!t.has_probe_timeout() && image.defaults().has_probe_timeout()) {
    *t.mutable_probe_timeout() = image.defaults().probe_timeout();
  }
  std::set<std::string> named;
  for (const pb::Env& e : requested.envs()) named.insert(e.name());
  google::protobuf::RepeatedPtrField<pb::Env> envs;
  for (const pb::Env& e : image.defaults().envs()) {
    if (!named.count(e.name())) *envs.Add() = e;
  }
  for (const pb::Env& e : requested.envs()) *envs.Add() = e;
  *t.mutable_envs() = std::move(envs);
  return t;
}

std::pair<std::string, std::string> SplitImageRef(std::string_view ref) {
  const size_t colon = ref.find(':');
  if (colon == std::string_view::npos) return {std::string(ref), ""};
  return {std::string(ref.substr(0, colon)), std::string(ref.substr(colon + 1))};
}

}  // namespace gpuaas::instance
