// The google.api.http rules of the compiled-in gpuaas services, as the gateway reads them, for
// the REST conventions' tests: one Binding per HTTP method and path (a rule and each of its
// additional_bindings), and path templates split into segments.
#pragma once

#include <google/protobuf/descriptor.h>

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuaas::rest {

// The services people and control-plane clients call through the gateway: every RPC has a rule.
inline constexpr std::array<std::string_view, 5> kPublicServices = {
    "gpuaas.auth.v1.AuthService", "gpuaas.stock.v1.StockService",
    "gpuaas.storage.v1.StorageService", "gpuaas.instance.v1.InstanceService",
    "gpuaas.instance.v1.ImageService"};
// Called by node agents and the access proxy with machine credentials, or by the instance
// service alone (NodeTokenService), never over the gateway
// (and the testing protos): no RPC has a rule.
inline constexpr std::array<std::string_view, 10> kMachineServices = {
    "gpuaas.stock.v1.NodeAgentService",       "gpuaas.instance.v1.AccessService",
    "gpuaas.instance.v1.NodeWorkloadService", "gpuaas.instance.v1.WorkloadLogService",
    "gpuaas.auth.v1.NodeTokenService",        "gpuaas.storage.v1.NodeStorageService",
    "gpuaas.testing.v1.EchoService",          "gpuaas.testing.v1.EchoStreamService",
    "gpuaas.testing.v1.EchoPushService",      "gpuaas.instance.v1.WorkloadSessionService"};
// Public, but full-duplex streams, which HTTP/JSON cannot carry: gRPC for clients (gpuaasctl),
// and the gateway's WebSocket for browsers (services/gateway/terminal_socket.h); no RPC has a
// rule.
inline constexpr std::array<std::string_view, 1> kDuplexServices = {
    "gpuaas.instance.v1.InstanceSessionService"};

struct Binding {
  const google::protobuf::MethodDescriptor* rpc = nullptr;
  std::string method;  // "GET", "POST", "PATCH", "DELETE", "PUT"
  std::string path;    // "/v1/instances/{instance_id}:start"
  std::string body;    // "", "*" or a field of the request
  bool additional = false;
};

// The service, looked up in the generated pool; nullptr when it is not linked in.
const google::protobuf::ServiceDescriptor* Service(std::string_view full_name);
// Every binding of one RPC; empty when it has no google.api.http rule.
std::vector<Binding> BindingsOf(const google::protobuf::MethodDescriptor& rpc);
// Every binding of every RPC of kPublicServices.
std::vector<Binding> PublicBindings();

// "/v1/instances/{instance_id}:start" -> segments {"v1", "instances", "{instance_id}"}, verb
// "start". nullopt unless the path starts with "/" and has no empty segment.
struct PathTemplate {
  std::vector<std::string> segments;
  std::string verb;
};
std::optional<PathTemplate> ParsePath(const std::string& path);
// "{a.b}" -> "a.b"; nullopt for a literal segment.
std::optional<std::string> VariableOf(const std::string& segment);

}  // namespace gpuaas::rest
