// Where each REST request goes: the `google.api.http` rules of the public services' methods
// (and their additional_bindings), read from the descriptors compiled into this binary, so the
// gateway serves exactly what the protos say and the two cannot drift.
#pragma once

#include <google/protobuf/descriptor.h>

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "services/gateway/path_template.h"

namespace gpuaas::gateway {

struct Route {
  std::string http_method;  // "GET", "POST", "PATCH", "PUT", "DELETE"
  PathTemplate path;
  std::string body;  // "" (no body), "*" (the whole request) or a field of the request
  const google::protobuf::MethodDescriptor* method = nullptr;

  bool server_streaming() const { return method->server_streaming(); }
  // "/gpuaas.instance.v1.InstanceService/CreateInstance": the gRPC method to call.
  std::string grpc_method() const;
};

struct RouteMatch {
  const Route* route = nullptr;
  std::vector<std::pair<std::string, std::string>> bindings;  // field path, value
};

class RouteTable final {
 public:
  // Every rule of every method of `services`. INVALID_ARGUMENT naming the method when a rule
  // cannot be served: a path variable or body that names no field of the request, a
  // client-streaming method, a server-streaming one that is not GET, two rules on one path.
  static absl::StatusOr<RouteTable> FromServices(
      std::span<const google::protobuf::ServiceDescriptor* const> services);

  // The route for `http_method` and `path` (no query string): the template with the most
  // literal segments when several match, then one with a custom verb (a variable may hold a
  // colon, so "/v1/images/a:b" is GetImage's when no route has the verb ":b").
  std::optional<RouteMatch> Find(absl::string_view http_method, absl::string_view path) const;
  // Whether any method serves `path` (a miss is then 405, not 404).
  bool HasPath(absl::string_view path) const;

  const std::vector<Route>& routes() const { return routes_; }

 private:
  std::vector<Route> routes_;
};

// The field at `path` ("instance.instance_id") of `message`; null when there is none or a
// segment before the last is not a singular message.
const google::protobuf::FieldDescriptor* FindFieldByPath(
    const google::protobuf::Descriptor& message, absl::string_view path);

}  // namespace gpuaas::gateway
