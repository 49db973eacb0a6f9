// instances create|get|list|start|stop|delete|open|metrics|watch, and usage
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <set>
#include <thread>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "google/protobuf/util/time_util.h"
#include "tools/gpuaasctl/commands.h"
#include "tools/gpuaasctl/instance_tables.h"

namespace gpuaas::ctl {
namespace {

using google::protobuf::util::TimeUtil;

struct InstanceFlags {
  std::string instance_id;
  std::string name;
  std::string spec_name;
  std::string image;
  std::string storage_id;
  std::string tenant_id;
  std::string idle_timeout;
  std::string max_run_time;
  std::string state;
  TemplateFlags tmpl;
  bool wait = false;
  std::string wait_timeout = "5m";
  PageFlags page;
};

google::protobuf::Duration ToProto(absl::Duration d) {
  return TimeUtil::NanosecondsToDuration(absl::ToInt64Nanoseconds(d));
}

absl::Status PrintInstance(Context& ctx, const instancepb::Instance& instance) {
  return ctx.Print(instance, [&] { return InstanceDetail(instance); });
}

bool Settled(const instancepb::Instance& i) {
  switch (i.desired_state()) {
    case instancepb::DESIRED_STATE_RUNNING:
      return i.state() == instancepb::STATE_RUNNING || i.state() == instancepb::STATE_FAILED;
    case instancepb::DESIRED_STATE_STOPPED:
      return i.state() == instancepb::STATE_STOPPED || i.state() == instancepb::STATE_FAILED;
    default:
      return false;
  }
}

// Polls the instance until it settles (RUNNING or FAILED for a start, STOPPED for a stop),
// drawing a spinner with the state and the time so far on a terminal's stderr. Error:
// DEADLINE_EXCEEDED after `timeout`; FAILED_PRECONDITION when it failed (the detail printed).
absl::StatusOr<instancepb::Instance> Wait(Session& s, const std::string& instance_id,
                                          absl::Duration timeout) {
  static constexpr char kFrames[] = "|/-\\";
  const bool tty = isatty(STDERR_FILENO) != 0;
  const absl::Time start = absl::Now();
  instancepb::GetInstanceRequest req;
  req.set_instance_id(instance_id);
  std::string last_state;
  for (int frame = 0;; ++frame) {
    GPUAAS_ASSIGN_OR_RETURN(instancepb::Instance i, s.Call(&InstanceClient::GetInstance, req));
    const std::string state = InstanceStateName(i.state());
    const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
    if (tty) {
      std::fprintf(stderr, "\r%c %s %-10s %.1fs ", kFrames[frame % 4], instance_id.c_str(),
                   state.c_str(), seconds);
    } else if (state != last_state) {
      std::fprintf(stderr, "%s %s (%.1fs)\n", instance_id.c_str(), state.c_str(), seconds);
    }
    last_state = state;
    if (Settled(i)) {
      if (tty) std::fprintf(stderr, "\n");
      return i;
    }
    if (absl::Now() - start > timeout) {
      if (tty) std::fprintf(stderr, "\n");
      return absl::DeadlineExceededError(absl::StrCat("instance ", instance_id, " still ", state,
                                                      " after ", absl::FormatDuration(timeout)));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// After --wait: the instance as it settled, and an error exit when it failed.
absl::Status PrintWaited(Context& ctx, Session& s, const std::string& id, const std::string& wait) {
  GPUAAS_ASSIGN_OR_RETURN(absl::Duration timeout, ParseDurationFlag("--wait-timeout", wait));
  GPUAAS_ASSIGN_OR_RETURN(instancepb::Instance i, Wait(s, id, timeout));
  GPUAAS_RETURN_IF_ERROR(PrintInstance(ctx, i));
  if (i.state() == instancepb::STATE_FAILED) {
    return absl::FailedPreconditionError(
        absl::StrCat("instance ", id, " failed: ", ReasonName(i.reason()), " ", i.message()));
  }
  return absl::OkStatus();
}

absl::Status Create(Context& ctx, Session& s, const InstanceFlags& f) {
  instancepb::CreateInstanceRequest req;
  req.set_instance_id(f.instance_id);
  req.set_name(f.name);
  req.set_spec_name(f.spec_name);
  req.set_image(f.image);
  req.set_storage_id(f.storage_id);
  req.set_tenant_id(f.tenant_id);
  GPUAAS_ASSIGN_OR_RETURN(*req.mutable_template_(), ParseTemplate(f.tmpl));
  GPUAAS_ASSIGN_OR_RETURN(absl::Duration idle, ParseDurationFlag("--idle-timeout", f.idle_timeout));
  GPUAAS_ASSIGN_OR_RETURN(absl::Duration max_run,
                          ParseDurationFlag("--max-run-time", f.max_run_time));
  if (idle > absl::ZeroDuration()) *req.mutable_idle_timeout() = ToProto(idle);
  if (max_run > absl::ZeroDuration()) *req.mutable_max_run_time() = ToProto(max_run);
  GPUAAS_ASSIGN_OR_RETURN(instancepb::Instance created,
                          s.Call(&InstanceClient::CreateInstance, req));
  if (f.wait) return PrintWaited(ctx, s, created.instance_id(), f.wait_timeout);
  return PrintInstance(ctx, created);
}

absl::Status List(Context& ctx, Session& s, const InstanceFlags& f) {
  instancepb::ListInstancesRequest req;
  req.set_spec_name(f.spec_name);
  req.set_tenant_id(f.tenant_id);
  if (!f.state.empty()) {
    GPUAAS_ASSIGN_OR_RETURN(instancepb::State state, ParseInstanceState("--state", f.state));
    req.set_state(state);
  }
  instancepb::ListInstancesResponse resp;
  GPUAAS_RETURN_IF_ERROR(ListPages(s, &InstanceClient::ListInstances, req, f.page, resp));
  return ctx.Print(resp, [&] { return InstanceTable(resp.instances()); });
}

// start, stop, delete: the same request shape, and --wait for start and stop.
template <class Req>
void AddLifecycle(CLI::App* group, Context& ctx, const std::string& name, const std::string& help,
                  Session::InstanceMethod<Req, instancepb::Instance> method, bool waits) {
  auto f = std::make_shared<InstanceFlags>();
  CLI::App* sub = group->add_subcommand(name, help);
  sub->add_option("instance", f->instance_id, "instance id")->required();
  if (waits) {
    sub->add_flag("--wait", f->wait, "wait until it settles, with a spinner");
    sub->add_option("--wait-timeout", f->wait_timeout, "give up waiting after this long")
        ->capture_default_str();
  }
  OnRun(sub, ctx, [&ctx, f, method](Session& s) -> absl::Status {
    Req req;
    req.set_instance_id(f->instance_id);
    GPUAAS_ASSIGN_OR_RETURN(instancepb::Instance resp, s.Call(method, req));
    if (f->wait) return PrintWaited(ctx, s, f->instance_id, f->wait_timeout);
    return PrintInstance(ctx, resp);
  });
}

void AddTemplateFlags(CLI::App* sub, TemplateFlags& t) {
  sub->add_option("--cmd", t.cmd, "shell command run by /bin/sh -c (default: the image's)");
  sub->add_option("--port", t.ports,
                  "a port the workload serves, repeatable: PORT[/tcp|/http][,probe][,public]"
                  "[,base=/path]; it listens on $GPUAAS_PORT_<PORT>");
  sub->add_option("--env", t.envs, "NAME=VALUE, repeatable");
  sub->add_option("--secret-env-file", t.secret_env_files,
                  "NAME=FILE: a secret variable whose value is FILE's first line; answers show "
                  "that it is set, never its value; repeatable");
  sub->add_option("--volume", t.volumes,
                  "NAME=/mount/path[,ro][,sub=dir] mounts the storage (or a directory of it), "
                  "repeatable");
  sub->add_option("--probe-timeout", t.probe_timeout,
                  "how long the probe may fail before the instance fails (default 5m)");
}

}  // namespace

void AddInstanceCommands(CLI::App& root, Context& ctx) {
  CLI::App* group =
      root.add_subcommand("instances", "run GPU instances: workloads on a GPU spec with a storage")
          ->require_subcommand(1);

  auto create = std::make_shared<InstanceFlags>();
  CLI::App* sub = group->add_subcommand(
      "create", "create and start an instance (the same id and request again is a no-op)");
  sub->add_option("instance", create->instance_id,
                  "instance id, also its URL name: [a-z0-9-], 1..63, starting with a letter "
                  "(default: chosen by the server)");
  sub->add_option("--spec", create->spec_name, "GPU spec")->required();
  sub->add_option("--image", create->image, "image name or name:version from `images list`");
  sub->add_option("--storage", create->storage_id, "storage to mount (see --volume)");
  sub->add_option("--name", create->name, "free text for people");
  sub->add_option("--tenant", create->tenant_id, "tenant to create it in (global roles)");
  sub->add_option("--idle-timeout", create->idle_timeout,
                  "stop it after its GPUs were idle this long (e.g. 30m)");
  sub->add_option("--max-run-time", create->max_run_time, "stop it after it ran this long");
  AddTemplateFlags(sub, create->tmpl);
  sub->add_flag("--wait", create->wait, "wait until it is RUNNING (or FAILED), with a spinner");
  sub->add_option("--wait-timeout", create->wait_timeout, "give up waiting after this long")
      ->capture_default_str();
  OnRun(sub, ctx, [&ctx, create](Session& s) { return Create(ctx, s, *create); });

  auto get = std::make_shared<InstanceFlags>();
  sub = group->add_subcommand("get", "show an instance with its endpoints and events");
  sub->add_option("instance", get->instance_id, "instance id")->required();
  OnRun(sub, ctx, [&ctx, get](Session& s) -> absl::Status {
    instancepb::GetInstanceRequest req;
    req.set_instance_id(get->instance_id);
    GPUAAS_ASSIGN_OR_RETURN(instancepb::Instance resp, s.Call(&InstanceClient::GetInstance, req));
    return PrintInstance(ctx, resp);
  });

  auto list = std::make_shared<InstanceFlags>();
  sub = group->add_subcommand("list", "list instances");
  sub->add_option("--state", list->state, "only instances in this state (running, failed ...)");
  sub->add_option("--spec", list->spec_name, "only instances of this spec");
  sub->add_option("--tenant", list->tenant_id, "only this tenant's (global roles; default all)");
  AddPageFlags(sub, list->page);
  OnRun(sub, ctx, [&ctx, list](Session& s) { return List(ctx, s, *list); });

  AddLifecycle<instancepb::StartInstanceRequest>(
      group, ctx, "start", "start a stopped or failed instance (it may land on another node)",
      &InstanceClient::StartInstance, true);
  AddLifecycle<instancepb::StopInstanceRequest>(
      group, ctx, "stop", "stop an instance: its GPU goes back, its storage and record stay",
      &InstanceClient::StopInstance, true);
  AddLifecycle<instancepb::DeleteInstanceRequest>(group, ctx, "delete",
                                                  "stop and forget an instance (its usage stays)",
                                                  &InstanceClient::DeleteInstance, false);

  auto open = std::make_shared<std::pair<std::string, int32_t>>();
  sub = group->add_subcommand(
      "open", "print a one-time link that opens a port of the instance in a browser");
  sub->add_option("instance", open->first, "instance id")->required();
  sub->add_option("--port", open->second,
                  "a template port (default: the probe port, else the first HTTP port)");
  OnRun(sub, ctx, [&ctx, open](Session& s) -> absl::Status {
    instancepb::GetInstanceAccessRequest req;
    req.set_instance_id(open->first);
    req.set_port(open->second);
    GPUAAS_ASSIGN_OR_RETURN(instancepb::InstanceAccess resp,
                            s.Call(&InstanceClient::GetInstanceAccess, req));
    // The link alone on stdout, for `xdg-open "$(gpuaasctl instances open ID)"`.
    return ctx.Print(resp, [&] {
      std::cerr << "one use, until " << FormatTimestamp(resp.expire_time())
                << "; with a Bearer token: " << resp.access_url() << "\n";
      return resp.url() + "\n";
    });
  });

  auto metrics = std::make_shared<std::string>();
  sub = group->add_subcommand("metrics", "the latest readings of an instance's GPUs");
  sub->add_option("instance", *metrics, "instance id")->required();
  OnRun(sub, ctx, [&ctx, metrics](Session& s) -> absl::Status {
    instancepb::GetInstanceMetricsRequest req;
    req.set_instance_id(*metrics);
    GPUAAS_ASSIGN_OR_RETURN(instancepb::InstanceMetrics resp,
                            s.Call(&InstanceClient::GetInstanceMetrics, req));
    return ctx.Print(resp, [&] { return InstanceMetricsTable(resp); });
  });

  auto watch = std::make_shared<int64_t>(0);
  sub = group->add_subcommand("watch", "follow instance changes until interrupted");
  sub->add_option("--since", *watch, "changes after this revision (default: everything now)");
  OnRun(sub, ctx, [&ctx, watch](Session& s) {
    instancepb::WatchInstancesRequest req;
    req.set_since_revision(*watch);
    absl::StatusOr<Format> format = ctx.format();
    if (!format.ok()) return format.status();
    return s.WatchInstances(req, [&](const instancepb::InstanceChange& change) {
      std::cout << (*format == Format::kJson ? ToJson(change) : InstanceChangeLine(change))
                << std::flush;
      return true;
    });
  });
}

void AddUsageCommands(CLI::App& root, Context& ctx) {
  struct UsageFlags {
    std::string instance_id;
    std::string tenant_id;
    std::string since;
    std::string until;
    PageFlags page;
  };
  auto f = std::make_shared<UsageFlags>();
  CLI::App* sub = root.add_subcommand("usage", "what instances ran and cost, per interval");
  sub->add_option("--instance", f->instance_id, "only this instance");
  sub->add_option("--tenant", f->tenant_id, "only this tenant (global roles)");
  sub->add_option("--since", f->since, "range start: RFC 3339 time, or a duration ago (24h)");
  sub->add_option("--until", f->until, "range end: RFC 3339 time, or a duration ago (default now)");
  AddPageFlags(sub, f->page);
  OnRun(sub, ctx, [&ctx, f](Session& s) -> absl::Status {
    instancepb::ListUsageRequest req;
    req.set_instance_id(f->instance_id);
    req.set_tenant_id(f->tenant_id);
    for (auto [flag, text, field] : {std::tuple{"--since", &f->since, req.mutable_start_time()},
                                     std::tuple{"--until", &f->until, req.mutable_end_time()}}) {
      if (text->empty()) continue;
      absl::Time t;
      absl::Duration ago;
      std::string err;
      if (absl::ParseDuration(*text, &ago)) {
        t = absl::Now() - ago;
      } else if (!absl::ParseTime(absl::RFC3339_full, *text, &t, &err)) {
        return absl::InvalidArgumentError(
            absl::StrCat(flag, ": \"", *text, "\": want an RFC 3339 time or a duration like 24h"));
      }
      *field = TimeUtil::NanosecondsToTimestamp(absl::ToUnixNanos(t));
    }
    if (f->since.empty()) req.clear_start_time();
    if (f->until.empty()) req.clear_end_time();
    instancepb::ListUsageResponse resp;
    GPUAAS_RETURN_IF_ERROR(ListPages(s, &InstanceClient::ListUsage, req, f->page, resp));
    // Every page carries the range's totals; merged pages keep one copy of each.
    std::set<std::pair<std::string, std::string>> seen;
    auto* totals = resp.mutable_totals();
    for (int i = 0; i < totals->size();) {
      if (seen.emplace(totals->Get(i).tenant_id(), totals->Get(i).currency()).second) {
        ++i;
      } else {
        totals->erase(totals->begin() + i);
      }
    }
    return ctx.Print(resp, [&] { return UsageTable(resp); });
  });
}

}  // namespace gpuaas::ctl
