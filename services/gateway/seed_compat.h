// The seeds' operator API as their document writes it (docs/seed-api.md): requests copied from
// it work on the unversioned paths (POST/DELETE /stocks, POST /gpu-instances, GET/DELETE
// /gpu-instances/{instanceID}, the storages'), beside the /v1 API, which keeps its own
// conventions. The seed spells identifiers Go's way (operationID, instanceID, tenantID,
// storageID), uses Kubernetes types (corev1.Protocol, resource.Quantity) and answers an
// instance's state by its own names.
#pragma once

#include <google/protobuf/message.h>

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "services/gateway/route_table.h"

namespace gpuaas::gateway {

// Whether `route` is one of the seeds' unversioned paths.
bool IsSeedRoute(const Route& route);

// A seed request's JSON body as the /v1 transcoder reads it: a key ending in "ID" after a
// lower-case letter as its lowerCamel JSON name (operationID: operationId); a port's
// corev1.Protocol "TCP" as HTTP (the seed's ports are web UIs reached over TCP through the
// access proxy; a plain-TCP port is /v1's PROTOCOL_TCP), "UDP" and "SCTP" refused naming the
// port; cpu and memory given as JSON numbers (a resource.Quantity may be written either way)
// as strings; tenantName, which only names the tenant tenantID (or the caller's token) picks,
// left out. Snake-case and lowerCamel bodies pass unchanged, and a body that is no JSON object
// is left for the transcoder to refuse. INVALID_ARGUMENT "body: FIELD: ..." for a value the
// platform cannot serve.
absl::StatusOr<std::string> SeedRequestBody(absl::string_view body);

// An answer on a seed path: the /v1 JSON, with an instance's state by the seed's names (init,
// ready, running, and in lower case the states the seed does not name: stopping, stopped,
// failed, deleting).
std::string SeedAnswer(const google::protobuf::Message& response);

}  // namespace gpuaas::gateway
