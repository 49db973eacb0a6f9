#include "tests/proto/http_bindings.h"

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "google/api/annotations.pb.h"
#include "gpuaas/auth/v1/auth.pb.h"
#include "gpuaas/instance/v1/instance.pb.h"
#include "gpuaas/instance/v1/workload_logs.pb.h"
#include "gpuaas/instance/v1/workload_sessions.pb.h"
#include "gpuaas/stock/v1/stock.pb.h"
#include "gpuaas/storage/v1/storage.pb.h"
#include "gpuaas/testing/v1/echo.pb.h"

namespace gpuaas::rest {
namespace {

using google::api::HttpRule;

std::optional<Binding> BindingOf(const google::protobuf::MethodDescriptor& rpc,
                                 const HttpRule& rule, bool additional) {
  Binding b{.rpc = &rpc, .body = rule.body(), .additional = additional};
  switch (rule.pattern_case()) {
    case HttpRule::kGet:
      b.method = "GET", b.path = rule.get();
      break;
    case HttpRule::kPost:
      b.method = "POST", b.path = rule.post();
      break;
    case HttpRule::kPatch:
      b.method = "PATCH", b.path = rule.patch();
      break;
    case HttpRule::kPut:
      b.method = "PUT", b.path = rule.put();
      break;
    case HttpRule::kDelete:
      b.method = "DELETE", b.path = rule.delete_();
      break;
    case HttpRule::kCustom:
      b.method = rule.custom().kind(), b.path = rule.custom().path();
      break;
    case HttpRule::PATTERN_NOT_SET:
      return std::nullopt;
  }
  return b;
}

}  // namespace

const google::protobuf::ServiceDescriptor* Service(std::string_view full_name) {
  // A generated file's descriptor is in the generated pool only when its object file is linked
  // in, and a static library's object is linked only when something refers to it.
  static const bool linked = {auth::v1::LoginRequest::descriptor() != nullptr &&
                              stock::v1::Spec::descriptor() != nullptr &&
                              storage::v1::Storage::descriptor() != nullptr &&
                              instance::v1::Instance::descriptor() != nullptr &&
                              instance::v1::ReadWorkloadLogsRequest::descriptor() != nullptr &&
                              instance::v1::ExecWorkloadRequest::descriptor() != nullptr &&
                              testing::v1::EchoRequest::descriptor() != nullptr};
  EXPECT_TRUE(linked);
  return google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(
      std::string(full_name));
}

std::vector<Binding> BindingsOf(const google::protobuf::MethodDescriptor& rpc) {
  std::vector<Binding> out;
  if (!rpc.options().HasExtension(google::api::http)) return out;
  const HttpRule& rule = rpc.options().GetExtension(google::api::http);
  if (std::optional<Binding> b = BindingOf(rpc, rule, false)) out.push_back(*std::move(b));
  for (const HttpRule& extra : rule.additional_bindings()) {
    if (std::optional<Binding> b = BindingOf(rpc, extra, true)) out.push_back(*std::move(b));
  }
  return out;
}

std::vector<Binding> PublicBindings() {
  std::vector<Binding> out;
  for (std::string_view name : kPublicServices) {
    const google::protobuf::ServiceDescriptor* s = Service(name);
    EXPECT_NE(s, nullptr) << name << " is not linked in";
    if (s == nullptr) continue;
    for (int i = 0; i < s->method_count(); ++i) {
      for (Binding& b : BindingsOf(*s->method(i))) out.push_back(std::move(b));
    }
  }
  return out;
}

std::optional<PathTemplate> ParsePath(const std::string& path) {
  if (!absl::StartsWith(path, "/")) return std::nullopt;
  PathTemplate t;
  // The custom verb follows the last segment's ':' outside braces.
  std::string segments = path.substr(1);
  const size_t colon = segments.find(':', segments.rfind('/') + 1);
  const size_t close = segments.rfind('}');
  if (colon != std::string::npos && (close == std::string::npos || colon > close)) {
    t.verb = segments.substr(colon + 1);
    segments.resize(colon);
    if (t.verb.empty()) return std::nullopt;
  }
  t.segments = absl::StrSplit(segments, '/');
  for (const std::string& s : t.segments) {
    if (s.empty()) return std::nullopt;
  }
  return t;
}

std::optional<std::string> VariableOf(const std::string& segment) {
  if (!absl::StartsWith(segment, "{") || !absl::EndsWith(segment, "}")) return std::nullopt;
  return segment.substr(1, segment.size() - 2);
}

}  // namespace gpuaas::rest
