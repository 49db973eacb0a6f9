#include "tools/gpuaasctl/instance_tables.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/util/time_util.h"
#include "libs/common/files.h"
#include "tools/gpuaasctl/output.h"
#include "tools/gpuaasctl/price.h"

namespace gpuaas::ctl {
namespace {

using google::protobuf::util::TimeUtil;

constexpr char kInstanceStatePrefix[] = "STATE_";
constexpr char kReasonPrefix[] = "REASON_";

std::string EnumWord(std::string_view name, std::string_view prefix) {
  if (name.substr(0, prefix.size()) == prefix) name.remove_prefix(prefix.size());
  return absl::StrReplaceAll(absl::AsciiStrToLower(std::string(name)), {{"_", "-"}});
}

absl::Status BadFlag(std::string_view flag, std::string_view value, std::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat(std::string(flag), ": \"", std::string(value), "\": ", std::string(why)));
}

std::string DurationCell(const google::protobuf::Duration& d) {
  if (d.seconds() == 0 && d.nanos() == 0) return "";
  return absl::FormatDuration(absl::Seconds(d.seconds()) + absl::Nanoseconds(d.nanos()));
}

std::string PortsCell(const instancepb::Instance& instance) {
  std::vector<std::string> parts;
  for (const auto& p : instance.ports()) {
    parts.push_back(absl::StrCat(p.port(), "->", p.host(), ":", p.host_port()));
  }
  if (parts.empty()) {
    for (const auto& p : instance.template_().ports()) parts.push_back(absl::StrCat(p.port()));
  }
  return absl::StrJoin(parts, ",");
}

std::string PortSpec(const instancepb::Port& p) {
  std::string s = absl::StrCat(p.port(), p.protocol() == instancepb::PROTOCOL_TCP ? "/tcp" : "");
  if (p.is_probe()) absl::StrAppend(&s, ",probe");
  if (p.is_public()) absl::StrAppend(&s, ",public");
  if (!p.base_url().empty()) absl::StrAppend(&s, ",base=", p.base_url());
  return s;
}

void AddTemplate(Fields& f, const instancepb::Template& t) {
  if (!t.cmd().empty()) f.Add("CMD", t.cmd());
  for (const auto& p : t.ports()) f.Add("PORT", PortSpec(p));
  for (const auto& e : t.envs()) {
    f.Add("ENV", absl::StrCat(e.name(), "=", e.secret() ? "(secret)" : e.value()));
  }
  for (const auto& v : t.volumes()) {
    f.Add("VOLUME", absl::StrCat(v.name(), "=", v.mount_path(), v.read_only() ? ",ro" : "",
                                 v.sub_path().empty() ? "" : ",sub=", v.sub_path()));
  }
  if (t.has_probe_timeout()) f.Add("PROBE-TIMEOUT", DurationCell(t.probe_timeout()));
}

std::string Money(int64_t micros, const std::string& currency) {
  return absl::StrCat(FormatPriceMicros(micros), currency.empty() ? "" : " ", currency);
}

}  // namespace

absl::StatusOr<instancepb::State> ParseInstanceState(std::string_view flag, std::string_view name) {
  std::string upper = absl::AsciiStrToUpper(std::string(name));
  if (upper.rfind(kInstanceStatePrefix, 0) != 0) upper = absl::StrCat(kInstanceStatePrefix, upper);
  instancepb::State state;
  if (!instancepb::State_Parse(upper, &state) || state == instancepb::STATE_UNSPECIFIED) {
    return BadFlag(flag, name,
                   "unknown state; want pending, ready, running, stopping, stopped, failed or "
                   "deleting");
  }
  return state;
}

std::string InstanceStateName(instancepb::State state) {
  if (state == instancepb::STATE_UNSPECIFIED) return "";
  const std::string& name = instancepb::State_Name(state);
  return name.empty() ? absl::StrCat(static_cast<int>(state))
                      : EnumWord(name, kInstanceStatePrefix);
}

std::string ReasonName(instancepb::Reason reason) {
  if (reason == instancepb::REASON_UNSPECIFIED) return "";
  const std::string& name = instancepb::Reason_Name(reason);
  return name.empty() ? absl::StrCat(static_cast<int>(reason)) : EnumWord(name, kReasonPrefix);
}

absl::StatusOr<absl::Duration> ParseDurationFlag(std::string_view flag, std::string_view text) {
  if (text.empty()) return absl::ZeroDuration();
  absl::Duration d;
  if (!absl::ParseDuration(std::string(text), &d) || d <= absl::ZeroDuration()) {
    return BadFlag(flag, text, "want a positive duration like 30m or 8h");
  }
  return d;
}

absl::StatusOr<instancepb::Template> ParseTemplate(const TemplateFlags& flags) {
  instancepb::Template t;
  t.set_cmd(flags.cmd);
  for (const std::string& spec : flags.ports) {
    std::vector<std::string> parts = absl::StrSplit(spec, ',');
    instancepb::Port* port = t.add_ports();
    std::string number = parts[0];
    if (absl::EndsWith(number, "/tcp")) {
      port->set_protocol(instancepb::PROTOCOL_TCP);
      number.resize(number.size() - 4);
    } else if (absl::EndsWith(number, "/http")) {
      port->set_protocol(instancepb::PROTOCOL_HTTP);
      number.resize(number.size() - 5);
    }
    int value = 0;
    if (!absl::SimpleAtoi(number, &value)) {
      return BadFlag("--port", spec, "want PORT[/tcp|/http][,probe][,public][,base=/path]");
    }
    port->set_port(value);
    for (size_t i = 1; i < parts.size(); ++i) {
      const std::string& opt = parts[i];
      if (opt == "probe") {
        port->set_is_probe(true);
      } else if (opt == "public") {
        port->set_is_public(true);
      } else if (absl::StartsWith(opt, "base=")) {
        port->set_base_url(opt.substr(5));
      } else {
        return BadFlag("--port", spec, absl::StrCat("unknown option \"", opt, "\""));
      }
    }
  }
  for (const std::string& spec : flags.envs) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos) return BadFlag("--env", spec, "want NAME=VALUE");
    instancepb::Env* env = t.add_envs();
    env->set_name(spec.substr(0, eq));
    env->set_value(spec.substr(eq + 1));
  }
  for (const std::string& spec : flags.secret_env_files) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos) return BadFlag("--secret-env-file", spec, "want NAME=FILE");
    absl::StatusOr<std::string> value = ReadSecretFile(spec.substr(eq + 1));
    if (!value.ok()) {
      return BadFlag("--secret-env-file", spec, std::string(value.status().message()));
    }
    instancepb::Env* env = t.add_envs();
    env->set_name(spec.substr(0, eq));
    env->set_value(*std::move(value));
    env->set_secret(true);
  }
  for (const std::string& spec : flags.volumes) {
    std::vector<std::string> parts = absl::StrSplit(spec, ',');
    const size_t eq = parts[0].find('=');
    if (eq == std::string::npos) {
      return BadFlag("--volume", spec, "want NAME=/mount/path[,ro][,sub=dir]");
    }
    instancepb::Volume* volume = t.add_volumes();
    volume->set_name(parts[0].substr(0, eq));
    volume->set_mount_path(parts[0].substr(eq + 1));
    for (size_t i = 1; i < parts.size(); ++i) {
      if (parts[i] == "ro") {
        volume->set_read_only(true);
      } else if (absl::StartsWith(parts[i], "sub=")) {
        volume->set_sub_path(parts[i].substr(4));
      } else {
        return BadFlag("--volume", spec, absl::StrCat("unknown option \"", parts[i], "\""));
      }
    }
  }
  absl::StatusOr<absl::Duration> probe = ParseDurationFlag("--probe-timeout", flags.probe_timeout);
  if (!probe.ok()) return probe.status();
  if (*probe > absl::ZeroDuration()) {
    *t.mutable_probe_timeout() = TimeUtil::NanosecondsToDuration(absl::ToInt64Nanoseconds(*probe));
  }
  return t;
}

std::string InstanceTable(const google::protobuf::RepeatedPtrField<instancepb::Instance>& list) {
  Table t({"INSTANCE", "STATE", "DESIRED", "SPEC", "NODE", "GPUS", "PORTS", "CREATED", "NAME"});
  for (const auto& i : list) {
    std::string state = InstanceStateName(i.state());
    if (i.reason() != instancepb::REASON_UNSPECIFIED) {
      absl::StrAppend(&state, "(", ReasonName(i.reason()), ")");
    }
    t.AddRow({i.instance_id(), state,
              EnumWord(instancepb::DesiredState_Name(i.desired_state()), "DESIRED_STATE_"),
              i.spec_name(), i.node_id(), absl::StrCat(i.gpu_num()), PortsCell(i),
              FormatTimestamp(i.create_time()), i.name()});
  }
  return t.Render();
}

std::string InstanceMetricsTable(const instancepb::InstanceMetrics& m) {
  Table t({"GPU", "MODEL", "UTIL", "MEMORY", "TEMP", "POWER"});
  for (const instancepb::GpuReading& g : m.gpus()) {
    t.AddRow({g.gpu_uuid(), g.model(), absl::StrFormat("%.0f%%", g.utilization_percent()),
              absl::StrFormat("%d/%d MiB", g.memory_used_mib(), g.memory_total_mib()),
              absl::StrFormat("%.0f C", g.temperature_celsius()),
              absl::StrFormat("%.0f W", g.power_watts())});
  }
  return absl::StrCat(t.Render(), "node ", m.node_id(), ", read ", FormatTimestamp(m.read_time()),
                      "\n");
}

std::string InstanceDetail(const instancepb::Instance& i) {
  Fields f;
  f.Add("INSTANCE", i.instance_id());
  f.Add("NAME", i.name());
  f.Add("TENANT", i.tenant_id());
  f.Add("STATE", InstanceStateName(i.state()));
  f.Add("DESIRED", EnumWord(instancepb::DesiredState_Name(i.desired_state()), "DESIRED_STATE_"));
  if (i.reason() != instancepb::REASON_UNSPECIFIED) f.Add("REASON", ReasonName(i.reason()));
  if (!i.message().empty()) f.Add("MESSAGE", i.message());
  if (i.reason() == instancepb::REASON_WORKLOAD_EXITED) {
    f.Add("EXIT-CODE", absl::StrCat(i.exit_code()));
  }
  f.Add("SPEC", absl::StrCat(i.spec_name(), " (", i.gpu_num(), " GPU)"));
  f.Add("IMAGE", i.image());
  f.Add("STORAGE", i.storage_id());
  f.Add("NODE", i.node_id());
  if (i.gpu_uuids_size() > 0) f.Add("GPUS", absl::StrJoin(i.gpu_uuids(), ","));
  if (!i.mig_partition().empty()) f.Add("MIG", i.mig_partition());
  for (const auto& p : i.ports()) {
    f.Add("ENDPOINT", absl::StrCat(p.port(), " -> ", p.host(), ":", p.host_port()));
  }
  AddTemplate(f, i.template_());
  if (i.has_idle_timeout()) f.Add("IDLE-TIMEOUT", DurationCell(i.idle_timeout()));
  if (i.has_max_run_time()) f.Add("MAX-RUN-TIME", DurationCell(i.max_run_time()));
  f.Add("CREATED", FormatTimestamp(i.create_time()));
  if (i.has_start_time()) f.Add("STARTED", FormatTimestamp(i.start_time()));
  if (i.has_stop_time()) f.Add("STOPPED", FormatTimestamp(i.stop_time()));
  f.Add("REVISION", absl::StrCat(i.revision()));
  std::string out = f.Render();
  if (i.events_size() > 0) {
    Table events({"TIME", "STATE", "REASON", "MESSAGE"});
    for (const auto& e : i.events()) {
      events.AddRow({FormatTimestamp(e.time()), InstanceStateName(e.state()),
                     ReasonName(e.reason()), e.message()});
    }
    absl::StrAppend(&out, "\n", events.Render());
  }
  return out;
}

std::string InstanceChangeLine(const instancepb::InstanceChange& change) {
  const instancepb::Instance& i = change.instance();
  std::string type = EnumWord(instancepb::InstanceChange::Type_Name(change.type()), "TYPE_");
  if (change.type() == instancepb::InstanceChange::TYPE_SYNCED) {
    return absl::StrCat(change.revision(), "  ", type, "\n");
  }
  std::vector<std::string> cells = {
      absl::StrCat(change.revision()), type,       i.instance_id(), InstanceStateName(i.state()),
      ReasonName(i.reason()),          i.node_id()};
  for (std::string& c : cells) {
    if (c.empty()) c = "-";
  }
  return absl::StrCat(absl::StrJoin(cells, "  "), "\n");
}

namespace {

// Whose image it is: the platform's catalog, or a tenant.
std::string ImageOwner(const instancepb::Image& image) {
  return image.tenant_id().empty() ? "catalog" : image.tenant_id();
}

// Where its pin stands: PENDING, READY, FAILED (images from before pins had a state: READY).
std::string ImageState(const instancepb::Image& image) {
  switch (image.state()) {
    case instancepb::IMAGE_STATE_PENDING:
      return "PENDING";
    case instancepb::IMAGE_STATE_FAILED:
      return "FAILED";
    default:
      return "READY";
  }
}

}  // namespace

std::string ImageTable(const google::protobuf::RepeatedPtrField<instancepb::Image>& images) {
  Table t({"IMAGE", "VERSION", "OWNER", "STATE", "PORTS", "CREATED", "DESCRIPTION"});
  for (const auto& image : images) {
    std::vector<std::string> ports;
    for (const auto& p : image.defaults().ports()) ports.push_back(PortSpec(p));
    t.AddRow({image.name(), image.version(), ImageOwner(image), ImageState(image),
              absl::StrJoin(ports, ";"), FormatTimestamp(image.create_time()),
              image.description()});
  }
  return t.Render();
}

std::string ImageDetail(const instancepb::Image& image) {
  Fields f;
  f.Add("IMAGE", absl::StrCat(image.name(), ":", image.version()));
  f.Add("DESCRIPTION", image.description());
  f.Add("COMMAND", image.command());
  f.Add("OWNER", ImageOwner(image));
  f.Add("OCI", image.oci_reference());
  f.Add("STATE", ImageState(image));
  f.Add("PINNED", image.oci_digest_reference());
  if (!image.state_reason().empty()) f.Add("REASON", image.state_reason());
  if (!image.registry_username().empty()) {
    f.Add("REGISTRY LOGIN", absl::StrCat(image.registry_username(),
                                         image.registry_password_set() ? " (password set)" : ""));
  }
  if (image.deny_egress()) f.Add("EGRESS", "denied");
  AddTemplate(f, image.defaults());
  f.Add("CREATED", FormatTimestamp(image.create_time()));
  return f.Render();
}

std::string UsageTable(const instancepb::ListUsageResponse& usage) {
  Table t({"USAGE", "INSTANCE", "SPEC", "NODE", "GPUS", "START", "END", "SECONDS", "PRICE/H",
           "AMOUNT"});
  for (const auto& r : usage.records()) {
    t.AddRow({r.usage_id(), r.instance_id(), r.spec_name(), r.node_id(), absl::StrCat(r.gpu_num()),
              FormatTimestamp(r.start_time()),
              r.has_end_time() ? FormatTimestamp(r.end_time()) : "running",
              absl::StrCat(r.seconds()), FormatPriceMicros(r.price().micros_per_hour()),
              FormatPriceMicros(r.amount_micros())});
  }
  std::string out = t.Render();
  for (const auto& total : usage.totals()) {
    absl::StrAppend(&out, "TOTAL  ", total.tenant_id(), "  ", total.seconds(), "s  ",
                    Money(total.amount_micros(), total.currency()), "\n");
  }
  return out;
}

}  // namespace gpuaas::ctl
