// REST requests as anyone on the internet sends them to the gateway, routed over the public
// services' real google.api.http rules and transcoded to their protobuf requests
// (services/gateway/route_table.h, request_transcoder.h): no crash, no UB, no exception, and a
// transcoded request prints as JSON that parses back to the same request.
//
// Input: '\n'-separated method, path, query string, then the JSON body (the rest).
#include "services/gateway/public_services.h"
#include "services/gateway/request_transcoder.h"
#include "services/gateway/route_table.h"
#include "services/gateway/seed_compat.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

const gpuaas::gateway::RouteTable& Routes() {
  static const auto* table = [] {
    auto services = gpuaas::gateway::PublicServiceDescriptors();
    if (!services.ok()) {
      gpuaas::fuzz::Fail("no public services", services.status().ToString());
    }
    auto routes = gpuaas::gateway::RouteTable::FromServices(*services);
    if (!routes.ok()) {
      gpuaas::fuzz::Fail("no route table", routes.status().ToString());
    }
    return new gpuaas::gateway::RouteTable(*std::move(routes));
  }();
  return *table;
}

// Whether a top-level field of `message` is a FieldMask that is set (update_mask).
bool HasFieldMask(const google::protobuf::Message& message) {
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  message.GetReflection()->ListFields(message, &fields);
  for (const auto* field : fields) {
    if (field->message_type() != nullptr &&
        field->message_type()->full_name() == "google.protobuf.FieldMask") {
      return true;
    }
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using ::gpuaas::fuzz::Fail;
  using ::gpuaas::fuzz::FieldOr;
  auto f = gpuaas::fuzz::Fields(gpuaas::fuzz::AsText(data, size), '\n', 4);
  const absl::string_view method = gpuaas::fuzz::Av(f[0]);
  const absl::string_view path = gpuaas::fuzz::Av(FieldOr(f, 1));
  const absl::string_view query = gpuaas::fuzz::Av(FieldOr(f, 2));
  const absl::string_view body = gpuaas::fuzz::Av(FieldOr(f, 3));
  (void)gpuaas::gateway::ParseQuery(query);
  (void)Routes().HasPath(path);
  auto match = Routes().Find(method, path);
  if (!match) {
    return 0;
  }
  // The seeds' paths read their bodies through the seed translation first, as the gateway does.
  absl::StatusOr<std::string> seed_body = gpuaas::gateway::SeedRequestBody(body);
  if (gpuaas::gateway::IsSeedRoute(*match->route) && !seed_body.ok()) {
    return 0;
  }
  auto request = gpuaas::gateway::TranscodeRequest(
      *match, query, gpuaas::gateway::IsSeedRoute(*match->route) ? *seed_body : body);
  if (!request.ok()) {
    return 0;
  }
  // Printed as JSON, it parses back to itself. Not for a FieldMask: protobuf's JSON form of a
  // path that is no field name ("_num", "a b") is lossy by design, and the services refuse
  // such paths anyway.
  if (HasFieldMask(**request)) {
    return 0;
  }
  const std::string json = gpuaas::gateway::MessageToJson(**request);
  std::unique_ptr<google::protobuf::Message> again((*request)->New());
  absl::Status parsed = gpuaas::gateway::ParseJsonBody(json, *again);
  // (Compared as JSON: a NaN is not equal to itself.)
  if (!parsed.ok() || gpuaas::gateway::MessageToJson(*again) != json) {
    Fail("a transcoded request's JSON does not parse back to it:", json);
  }
  return 0;
}
