// Which gpuaas RPCs a client may send again after UNAVAILABLE, and the service config that has
// gRPC do so on a channel over replicas (channel.h). Private to libs/client.
//
// UNAVAILABLE after a call left the client (its replica died mid-call, or answered that it
// cannot serve now) leaves unknown whether the call took effect, so only calls whose repeat
// changes nothing are sent again: reads (Get*, List*, Watch*, Search*, WhoAmI,
// CheckAccessGrant, ReadWorkloadLogs) and writes idempotent by a key every request carries
// (proto/README.md "Creates are idempotent": CreateSpec by name, ClaimStock by instance_id,
// ...). Creates whose key is optional (request_id, operation_id) are repeated by their typed
// client only when the request carries the key (internal/unary_call.h RepeatableUnaryCall).
// Not this policy's business: round robin never picks a replica whose connection is refused or
// broken, and gRPC's transparent retry re-sends, whatever the method, a call the server never
// saw (its stream never left the client, or was refused unprocessed: GOAWAY, REFUSED_STREAM).
#pragma once

#include <string>
#include <vector>

namespace gpuaas::client::internal {

// "gpuaas.auth.v1.AuthService/GetTenant" ...: every method of the gpuaas services that a
// client may send again after UNAVAILABLE, by the rules above.
std::vector<std::string> RepeatableMethods();

// The methods named in the rules above (not found by their prefix) that no gpuaas service
// has: empty unless one was renamed or removed. For the test that keeps the list honest.
std::vector<std::string> UnknownNamedMethods();

// The service config of a channel over replicas: the round_robin policy (calls spread over
// the replicas; a replica whose connection fails is skipped until it connects again) and a
// retry policy for RepeatableMethods(): up to 3 attempts on UNAVAILABLE, 50 ms backoff
// doubling to 500 ms, within the call's deadline. Round robin sends each attempt to the next
// replica. And client-side health checking: the channel watches each replica's
// grpc.health.v1 status and leaves out one that is not SERVING, so a replica that drains
// (rpc::Server::Shutdown) stops getting calls before it stops taking them.
std::string ReplicaServiceConfig();

}  // namespace gpuaas::client::internal
