// The methods the load generator can call, as one table: a name, whether it needs a bearer
// token, and how to build an Invoker for it. Adding another service's method is one entry.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "bench/loadgen/open_loop.h"
#include "libs/client/endpoint.h"

namespace gpuaas::bench {

// Everything a request builder may use. The request is built once and shared by every call.
struct MethodArgs {
  absl::Duration timeout = absl::Seconds(5);  // deadline of each call
  std::string token;                          // bearer access token; empty for public methods
  std::string user;
  std::string password;
  std::string tenant;
  std::string storage_id;
  std::string instance_id;  // GetInstance's instance; CreateInstance's id prefix
  std::string spec_name;    // CreateInstance
  std::string cmd;          // CreateInstance's template command
};

struct MethodSpec {
  std::string_view name;     // "WhoAmI"
  std::string_view service;  // "gpuaas.auth.v1.AuthService", for the report
  client::Service server;    // where it is served (tokens always come from auth)
  bool needs_token;
  // Error: INVALID_ARGUMENT when an argument the request needs is missing.
  absl::StatusOr<Invoker> (*make)(std::shared_ptr<grpc::Channel> channel, const MethodArgs& args);
};

const std::vector<MethodSpec>& Methods();

// nullptr when unknown.
const MethodSpec* FindMethod(std::string_view name);

// "WhoAmI|GetTenant|..." for help and errors.
std::string MethodNames();

}  // namespace gpuaas::bench
