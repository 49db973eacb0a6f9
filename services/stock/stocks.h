// Stocks: pre-placed slots of a spec on a node. Platform admins create and delete them in bulk
// (placed by the ClusterView, written under each node's generation guard, idempotent by
// operation_id); services claim one per instance and release it.
//
// Every method blocks on PostgreSQL and returns INVALID_ARGUMENT naming the field,
// PERMISSION_DENIED, NOT_FOUND, FAILED_PRECONDITION, RESOURCE_EXHAUSTED, ALREADY_EXISTS or
// UNAVAILABLE as stock.proto documents for its RPC.
#pragma once

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "gpuaas/stock/v1/stock.pb.h"
#include "libs/authz/principal.h"
#include "libs/db/db.h"
#include "libs/service/request_log.h"
#include "services/stock/repository.h"
#include "services/stock/view_keeper.h"

namespace gpuaas::stock {

class StockPool final {
 public:
  // `silence`: a node silent for longer than it allows holds no claimable stock, even before
  // the monitor marks it NOT_READY.
  StockPool(db::Pool& pool, Repository& repo, ViewKeeper& keeper, NodeSilence silence)
      : pool_(pool), repo_(repo), keeper_(keeper), silence_(silence) {}

  absl::Status CreateStocks(const authz::Principal& p, const pb::CreateStocksRequest& req,
                            pb::CreateStocksResponse& out);
  absl::Status DeleteStocks(const authz::Principal& p, const pb::DeleteStocksRequest& req,
                            pb::DeleteStocksResponse& out);
  absl::Status ListStocks(const authz::Principal& p, const pb::ListStocksRequest& req,
                          pb::ListStocksResponse& out);
  absl::Status SearchStocks(const authz::Principal& p, const pb::SearchStocksRequest& req,
                            pb::SearchStocksResponse& out);
  absl::Status GetStockSummary(const authz::Principal& p, const pb::GetStockSummaryRequest& req,
                               pb::GetStockSummaryResponse& out);
  absl::Status ClaimStock(const authz::Principal& p, const pb::ClaimStockRequest& req,
                          pb::Stock& out);
  absl::Status ReleaseStock(const authz::Principal& p, const pb::ReleaseStockRequest& req,
                            pb::ReleaseStockResponse& out);

 private:
  // The spec to place, refusing seed fields that contradict it.
  absl::StatusOr<pb::Spec> SpecForCreate(const pb::CreateStocksRequest& req);
  // One placement attempt; `conflicted` lists the nodes whose guard failed.
  absl::Status TryCreate(const authz::Principal& p, const pb::CreateStocksRequest& req,
                         const sched::Request& request, pb::CreateStocksResponse& out,
                         std::vector<std::string>& conflicted)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(keeper_.mu());

  db::Pool& pool_;
  Repository& repo_;
  ViewKeeper& keeper_;
  NodeSilence silence_;
  service::RequestLog log_{"stock"};
};

}  // namespace gpuaas::stock
