// Idempotent creates keyed by a client's request id (design: "every create takes a request id;
// a retry returns the first result"). A service keeps one table, <schema>.requests:
//
//   CREATE TABLE <schema>.requests (
//     method text, caller text, request_id text, request_hash text NOT NULL DEFAULT '',
//     result_id text NOT NULL, create_time timestamptz NOT NULL DEFAULT now(),
//     PRIMARY KEY (method, caller, request_id));
//
// and runs each create through RequestLog::Create inside a SERIALIZABLE transaction, so two
// retries racing on one request id cannot both create.
#pragma once

#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "google/protobuf/message.h"
#include "libs/db/db.h"

namespace gpuaas::service {

// Who asked for what: the RPC, the principal (request ids are scoped per caller), and the
// caller's id; an empty request_id opts out of idempotency.
struct RequestKey {
  std::string_view method;
  std::string_view caller;
  std::string_view request_id;
};

struct CreateOutcome {
  std::string id;      // the created resource's id, now or by the first call
  bool first = false;  // this call created it (a retry gets false)
};

class RequestLog final {
 public:
  // `schema` is the service's own schema, a trusted constant ("auth").
  explicit RequestLog(std::string_view schema);

  // Runs `create` unless `key` was seen before:
  //  - same request id and the same request (by fingerprint): the first call's id, first=false;
  //  - same request id, a different request: ALREADY_EXISTS "request_id: ...";
  //  - otherwise: `create(tx)`'s id (recorded under the key), first=true.
  // `request` is the create request with any secret fields cleared (the fingerprint is a
  // plain SHA-256 and must not let a stored row confirm a guessed password). Throws what
  // `tx` throws; returns `create`'s error unchanged.
  absl::StatusOr<CreateOutcome> Create(
      db::Tx& tx, const RequestKey& key, const google::protobuf::Message& request,
      absl::FunctionRef<absl::StatusOr<std::string>(db::Tx&)> create) const;

 private:
  std::string find_sql_;
  std::string record_sql_;
};

// Hex SHA-256 of the message's deterministic serialization.
std::string Fingerprint(const google::protobuf::Message& message);

}  // namespace gpuaas::service
