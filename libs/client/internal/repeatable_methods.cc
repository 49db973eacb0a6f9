#include "libs/client/internal/repeatable_methods.h"

#include <google/protobuf/descriptor.h>

#include <array>
#include <set>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gpuaas/auth/v1/auth.pb.h"
#include "gpuaas/instance/v1/instance.pb.h"
#include "gpuaas/instance/v1/workload_logs.pb.h"
#include "gpuaas/stock/v1/stock.pb.h"
#include "gpuaas/storage/v1/storage.pb.h"

namespace gpuaas::client::internal {
namespace {

using google::protobuf::FileDescriptor;
using google::protobuf::MethodDescriptor;

// Reads by name: every method starting with one of these only reads.
constexpr std::array<std::string_view, 4> kReadPrefixes = {"Get", "List", "Watch", "Search"};

// Reads named otherwise, writes whose every request carries their idempotency key (the proto
// comment of each says so: "Idempotent by spec name", "Revoking twice is OK", ...), and writes
// that set a desired state (a second StopInstance finds it set and returns the instance as is;
// a second StartInstance finds it starting). IssueNodeToken only mints: a second token is as
// good as the first.
constexpr std::array<std::string_view, 20> kNamedRepeatables = {
    "WhoAmI",         "CheckAccessGrant", "ReadWorkloadLogs",  "CreateSpec",     "ClaimStock",
    "ReleaseStock",   "RegisterNode",     "CreateStorageSpec", "AttachStorage",  "DetachStorage",
    "CreateInstance", "CreateImage",      "ReportWorkloads",   "ReportAccess",   "RevokeApiKey",
    "StartInstance",  "StopInstance",     "DeleteInstance",    "IssueNodeToken", "CreateSnapshot",
};

// The proto files of the services a gpuaas client calls, each reached through one of its
// messages (which also keeps the file linked in).
std::array<const FileDescriptor*, 5> ServiceFiles() {
  return {
      auth::v1::WhoAmIRequest::descriptor()->file(),
      stock::v1::GetSpecRequest::descriptor()->file(),
      storage::v1::GetStorageRequest::descriptor()->file(),
      instance::v1::GetInstanceRequest::descriptor()->file(),
      instance::v1::ReadWorkloadLogsRequest::descriptor()->file(),
  };
}

bool IsRepeatable(const MethodDescriptor& method) {
  if (method.client_streaming()) {
    return false;
  }
  for (std::string_view prefix : kReadPrefixes) {
    if (std::string_view(method.name()).starts_with(prefix)) {
      return true;
    }
  }
  for (std::string_view name : kNamedRepeatables) {
    if (method.name() == name) {
      return true;
    }
  }
  return false;
}

template <class Visit>
void ForEachMethod(Visit visit) {
  for (const FileDescriptor* file : ServiceFiles()) {
    for (int s = 0; s < file->service_count(); ++s) {
      for (int m = 0; m < file->service(s)->method_count(); ++m) {
        visit(*file->service(s)->method(m));
      }
    }
  }
}

}  // namespace

std::vector<std::string> RepeatableMethods() {
  std::vector<std::string> out;
  ForEachMethod([&](const MethodDescriptor& method) {
    if (IsRepeatable(method)) {
      out.push_back(absl::StrCat(method.service()->full_name(), "/", method.name()));
    }
  });
  return out;
}

std::vector<std::string> UnknownNamedMethods() {
  std::set<std::string> known;
  ForEachMethod([&](const MethodDescriptor& method) { known.insert(method.name()); });
  std::vector<std::string> out;
  for (std::string_view name : kNamedRepeatables) {
    if (!known.contains(std::string(name))) {
      out.emplace_back(name);
    }
  }
  return out;
}

std::string ReplicaServiceConfig() {
  std::vector<std::string> names;
  for (const std::string& method : RepeatableMethods()) {
    size_t slash = method.find('/');
    names.push_back(absl::StrCat(R"({"service":")", method.substr(0, slash), R"(","method":")",
                                 method.substr(slash + 1), R"("})"));
  }
  return absl::StrCat(R"({"loadBalancingConfig":[{"round_robin":{}}],)",
                      R"("healthCheckConfig":{"serviceName":""},"methodConfig":[{"name":[)",
                      absl::StrJoin(names, ","),
                      R"(],"retryPolicy":{"maxAttempts":3,"initialBackoff":"0.05s",)",
                      R"("maxBackoff":"0.5s","backoffMultiplier":2,)",
                      R"("retryableStatusCodes":["UNAVAILABLE"]}}]})");
}

}  // namespace gpuaas::client::internal
