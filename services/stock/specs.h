// GPU specifications: platform admins define them, everyone reads them. Plain C++ on API
// messages; the gRPC adapter (grpc_service.h) maps statuses, the repository holds the SQL.
//
// Every method blocks on PostgreSQL and returns INVALID_ARGUMENT naming the field,
// PERMISSION_DENIED when the caller may not write specs, NOT_FOUND, ALREADY_EXISTS, or
// UNAVAILABLE when the database is down.
#pragma once

#include "absl/status/status.h"
#include "gpuaas/stock/v1/stock.pb.h"
#include "libs/authz/principal.h"
#include "libs/db/db.h"
#include "services/stock/repository.h"

namespace gpuaas::stock {

class SpecCatalog final {
 public:
  SpecCatalog(db::Pool& pool, Repository& repo) : pool_(pool), repo_(repo) {}

  // Idempotent by name: the same spec again (quantities compared by value, "8" == "8000m")
  // answers the stored one; a different spec under a taken name is ALREADY_EXISTS.
  absl::Status CreateSpec(const authz::Principal& p, const pb::CreateSpecRequest& req,
                          pb::Spec& out);
  absl::Status GetSpec(const authz::Principal& p, const pb::GetSpecRequest& req, pb::Spec& out);
  absl::Status ListSpecs(const authz::Principal& p, const pb::ListSpecsRequest& req,
                         pb::ListSpecsResponse& out);
  // Price, description and deprecated only: what a spec asks of a node never changes.
  absl::Status UpdateSpec(const authz::Principal& p, const pb::UpdateSpecRequest& req,
                          pb::Spec& out);
  absl::Status DeleteSpec(const authz::Principal& p, const pb::DeleteSpecRequest& req);

 private:
  db::Pool& pool_;
  Repository& repo_;
};

}  // namespace gpuaas::stock
