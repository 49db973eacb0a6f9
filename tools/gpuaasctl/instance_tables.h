// What `-o table` prints for the instance service's resources (instances, their events and
// changes, images, usage), and the parsing of the template flags `instances create` and
// `images create` share. Every cell but a trailing free-text one is one word.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "gpuaas/instance/v1/instance.pb.h"

namespace gpuaas::ctl {

namespace instancepb = ::gpuaas::instance::v1;

// pending, ready, running, stopping, stopped, failed, deleting; case-insensitive, and the enum's
// own spelling (STATE_RUNNING) works too. Error: INVALID_ARGUMENT naming `flag`.
absl::StatusOr<instancepb::State> ParseInstanceState(std::string_view flag, std::string_view name);
// "running" ...; "" for UNSPECIFIED.
std::string InstanceStateName(instancepb::State state);
// "no-capacity", "workload-exited" ...; "" for UNSPECIFIED.
std::string ReasonName(instancepb::Reason reason);

// The template flags: --port PORT[,http|tcp][,probe][,public][,base=/path] (repeatable),
// --env NAME=VALUE, --secret-env-file NAME=FILE (a write-only value read from FILE, so it is
// never on a command line), --volume NAME=/mount/path[,ro][,sub=dir/in/storage], --cmd, and
// --probe-timeout. Error: INVALID_ARGUMENT naming the flag and the bad value.
struct TemplateFlags {
  std::vector<std::string> ports;
  std::vector<std::string> envs;
  std::vector<std::string> secret_env_files;
  std::vector<std::string> volumes;
  std::string cmd;
  std::string probe_timeout;
};
absl::StatusOr<instancepb::Template> ParseTemplate(const TemplateFlags& flags);

// "30m", "8h", "1h30m" (absl durations); "" is unset (nullopt-like: returns ZeroDuration).
// Error: INVALID_ARGUMENT naming `flag`.
absl::StatusOr<absl::Duration> ParseDurationFlag(std::string_view flag, std::string_view text);

// INSTANCE STATE DESIRED SPEC NODE GPUS PORTS CREATED NAME; PORTS as port→host:port.
std::string InstanceTable(const google::protobuf::RepeatedPtrField<instancepb::Instance>& list);
// One instance: its fields, its template, where its ports are, and its events.
std::string InstanceDetail(const instancepb::Instance& instance);
// One watch line: REVISION TYPE INSTANCE STATE REASON NODE.
// One row per GPU: its readings.
std::string InstanceMetricsTable(const instancepb::InstanceMetrics& m);

std::string InstanceChangeLine(const instancepb::InstanceChange& change);

// IMAGE VERSION PORTS CREATED DESCRIPTION.
std::string ImageTable(const google::protobuf::RepeatedPtrField<instancepb::Image>& images);
std::string ImageDetail(const instancepb::Image& image);

// USAGE INSTANCE SPEC NODE GPUS START END SECONDS PRICE/H AMOUNT, then one TOTAL line per
// tenant and currency. Money as decimals of the currency unit.
std::string UsageTable(const instancepb::ListUsageResponse& usage);

}  // namespace gpuaas::ctl
