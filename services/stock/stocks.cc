#include "services/stock/stocks.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "libs/common/ids.h"
#include "libs/common/quantity.h"
#include "libs/common/status_macros.h"
#include "libs/rpc/handler.h"
#include "libs/service/paging.h"
#include "libs/service/validate.h"
#include "services/stock/spec_rules.h"

namespace gpuaas::stock {
namespace {

constexpr int32_t kMaxStocksPerCall = 10000;
// A guard fails only when another replica wrote the same node in between; a few re-reads settle
// any realistic contention.
constexpr int kMaxPlacementAttempts = 8;

absl::Status ValidateNumber(int32_t number) {
  if (number < 1 || number > kMaxStocksPerCall) {
    return service::InvalidField("number", absl::StrCat("must be 1 to ", kMaxStocksPerCall));
  }
  return absl::OkStatus();
}

absl::Status ValidateInstanceId(const std::string& instance_id) {
  GPUAAS_RETURN_IF_ERROR(service::ValidateRequired("instance_id", instance_id));
  return service::ValidateRequestId("instance_id", instance_id);
}

// Two retries of one operation, racing on two replicas, queue here instead of failing the
// request log's unique key.
void LockOperation(db::Tx& tx, const std::string& method, const std::string& operation_id) {
  constexpr std::string_view kLockOperation =
      "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))";
  if (!operation_id.empty()) tx.Exec(kLockOperation, absl::StrCat(method, "/", operation_id));
}

absl::Status SpecNotFound(const std::string& name) {
  return absl::NotFoundError(absl::StrCat("spec ", name, " not found"));
}

}  // namespace

absl::StatusOr<pb::Spec> StockPool::SpecForCreate(const pb::CreateStocksRequest& req) {
  GPUAAS_ASSIGN_OR_RETURN(
      pb::Spec spec,
      pool_.Read<pb::Spec>("stock.get_spec", [&](db::Tx& tx) -> absl::StatusOr<pb::Spec> {
        std::optional<pb::Spec> s = repo_.GetSpec(tx, req.spec_name());
        if (!s) return SpecNotFound(req.spec_name());
        return *std::move(s);
      }));
  if (spec.deprecated()) {
    return absl::FailedPreconditionError(
        absl::StrCat("spec ", spec.spec_name(), " is deprecated: it gets no new stocks"));
  }
  const auto contradicts = [&](std::string_view field, const std::string& given,
                               const std::string& spec_value) {
    return service::InvalidField(
        field, absl::StrCat(given, " contradicts spec ", spec.spec_name(), " (", spec_value, ")"));
  };
  if (!req.cpu().empty()) {
    GPUAAS_ASSIGN_OR_RETURN(int64_t given, ParseCpuMillis("cpu", req.cpu()));
    GPUAAS_ASSIGN_OR_RETURN(int64_t want, ParseCpuMillis("cpu", spec.cpu()));
    if (given != want) return contradicts("cpu", req.cpu(), spec.cpu());
  }
  if (!req.memory().empty()) {
    GPUAAS_ASSIGN_OR_RETURN(int64_t given, ParseBytes("memory", req.memory()));
    GPUAAS_ASSIGN_OR_RETURN(int64_t want, ParseBytes("memory", spec.memory()));
    if (given != want) return contradicts("memory", req.memory(), spec.memory());
  }
  if (!req.gpu_type().empty() && req.gpu_type() != spec.gpu_type()) {
    return contradicts("gpu_type", req.gpu_type(), spec.gpu_type());
  }
  if (req.gpu_num() != 0 && req.gpu_num() != spec.gpu_num()) {
    return contradicts("gpu_num", absl::StrCat(req.gpu_num()), absl::StrCat(spec.gpu_num()));
  }
  return spec;
}

absl::Status StockPool::CreateStocks(const authz::Principal& p, const pb::CreateStocksRequest& req,
                                     pb::CreateStocksResponse& out) {
  GPUAAS_RETURN_IF_ERROR(ValidateNumber(req.number()));
  GPUAAS_RETURN_IF_ERROR(service::ValidateRequestId("operation_id", req.operation_id()));
  GPUAAS_RETURN_IF_ERROR(ValidateSpecName("spec_name", req.spec_name()));
  GPUAAS_RETURN_IF_ERROR(authz::RequirePlatformAdmin(p));
  GPUAAS_ASSIGN_OR_RETURN(pb::Spec spec, SpecForCreate(req));
  GPUAAS_ASSIGN_OR_RETURN(SpecDemand demand, ValidateSpec("spec", spec));
  const sched::Request request = PlacementRequest(spec, demand);

  absl::MutexLock lock(&keeper_.mu());
  for (int attempt = 0; attempt < kMaxPlacementAttempts; ++attempt) {
    GPUAAS_RETURN_IF_ERROR(keeper_.SyncLocked());
    std::vector<std::string> conflicted;
    absl::Status s = TryCreate(p, req, request, out, conflicted);
    if (conflicted.empty()) return s;
    GPUAAS_RETURN_IF_ERROR(keeper_.ReloadLocked(conflicted));
  }
  return absl::AbortedError("stock placement kept meeting concurrent changes; retry");
}

absl::Status StockPool::TryCreate(const authz::Principal& p, const pb::CreateStocksRequest& req,
                                  const sched::Request& request, pb::CreateStocksResponse& out,
                                  std::vector<std::string>& conflicted) {
  ClusterView& view = keeper_.view();
  const absl::flat_hash_map<std::string, int64_t> seen = view.generations();
  std::vector<sched::Placement> pending;
  std::vector<std::string> ids;
  pb::CreateStocksResponse resp;
  const std::string caller = rpc::PrincipalLabel(p);
  absl::Status s = pool_.RunInTransaction("stock.create_stocks", [&](db::Tx& tx) -> absl::Status {
    // A retried transaction starts again from the view as it was.
    view.Undo(pending);
    pending.clear();
    ids.clear();
    conflicted.clear();
    resp.Clear();
    LockOperation(tx, "CreateStocks", req.operation_id());
    absl::StatusOr<service::CreateOutcome> outcome = log_.Create(
        tx, {.method = "CreateStocks", .caller = caller, .request_id = req.operation_id()}, req,
        [&](db::Tx& tx) -> absl::StatusOr<std::string> {
          GPUAAS_ASSIGN_OR_RETURN(
              pending, view.Place(request, req.number(),
                                  req.allow_partial() ? sched::BatchMode::kAsManyAsFit
                                                      : sched::BatchMode::kAllOrNothing));
          // Guard each node at the generation placed from.
          std::set<std::string> nodes;
          for (const sched::Placement& placed : pending) nodes.insert(placed.node);
          std::vector<std::pair<std::string, int64_t>> guards;
          for (const std::string& node : nodes) {
            auto it = seen.find(node);
            guards.emplace_back(node, it == seen.end() ? -1 : it->second);
          }
          conflicted = repo_.GuardGenerations(tx, guards);
          if (!conflicted.empty()) return absl::AbortedError("stale cluster view");
          for (size_t i = 0; i < pending.size(); ++i) ids.push_back(NewId("stk_"));
          repo_.InsertStocks(tx, ids, req.spec_name(), pending);
          resp.set_placed(static_cast<int32_t>(pending.size()));
          if (resp.placed() < req.number()) resp.set_shortfall_reason(view.Explain(request));
          for (pb::Stock& stock : repo_.GetStocks(tx, ids)) *resp.add_stocks() = std::move(stock);
          const std::string key = NewId("op_");
          repo_.SaveOperation(tx, key, resp);
          return key;
        });
    if (!outcome.ok()) return outcome.status();
    if (!outcome->first && !repo_.LoadOperation(tx, outcome->id, resp)) {
      return absl::InternalError("operation answer missing");
    }
    return absl::OkStatus();
  });
  if (!s.ok()) {
    view.Undo(pending);
    return s;
  }
  for (size_t i = 0; i < pending.size(); ++i) view.Record(ids[i], req.spec_name(), pending[i]);
  std::set<std::string> written;
  for (const sched::Placement& placed : pending) written.insert(placed.node);
  for (const std::string& node : written) view.Advance(node);
  out = std::move(resp);
  return absl::OkStatus();
}

absl::Status StockPool::DeleteStocks(const authz::Principal& p, const pb::DeleteStocksRequest& req,
                                     pb::DeleteStocksResponse& out) {
  GPUAAS_RETURN_IF_ERROR(ValidateNumber(req.number()));
  GPUAAS_RETURN_IF_ERROR(service::ValidateRequestId("operation_id", req.operation_id()));
  GPUAAS_RETURN_IF_ERROR(ValidateSpecName("spec_name", req.spec_name()));
  GPUAAS_RETURN_IF_ERROR(authz::RequirePlatformAdmin(p));
  const std::string caller = rpc::PrincipalLabel(p);

  absl::MutexLock lock(&keeper_.mu());
  GPUAAS_RETURN_IF_ERROR(keeper_.SyncLocked());
  ClusterView& view = keeper_.view();
  pb::DeleteStocksResponse resp;
  std::vector<std::pair<std::string, int64_t>> bumped;  // (node, its generation now)
  GPUAAS_RETURN_IF_ERROR(
      pool_.RunInTransaction("stock.delete_stocks", [&](db::Tx& tx) -> absl::Status {
        resp.Clear();
        bumped.clear();
        LockOperation(tx, "DeleteStocks", req.operation_id());
        absl::StatusOr<service::CreateOutcome> outcome = log_.Create(
            tx, {.method = "DeleteStocks", .caller = caller, .request_id = req.operation_id()}, req,
            [&](db::Tx& tx) -> absl::StatusOr<std::string> {
              if (!repo_.GetSpec(tx, req.spec_name())) return SpecNotFound(req.spec_name());
              // Stocks that cannot be claimed now go first, then those whose removal frees
              // whole GPUs and nodes.
              Repository::Unclaimed unclaimed = repo_.LockUnclaimedOfSpec(tx, req.spec_name());
              std::vector<std::string> order = view.DeletionOrder(std::move(unclaimed.unavailable));
              for (std::string& id : view.DeletionOrder(std::move(unclaimed.available))) {
                order.push_back(std::move(id));
              }
              if (order.size() > static_cast<size_t>(req.number())) order.resize(req.number());
              std::vector<std::string> on = repo_.DeleteStocks(tx, order);
              std::sort(on.begin(), on.end());
              on.erase(std::unique(on.begin(), on.end()), on.end());
              // Freeing never overbooks, so no guard: the bump tells the other replicas.
              bumped = repo_.BumpGenerations(tx, on);
              resp.set_deleted(static_cast<int32_t>(order.size()));
              for (std::string& id : order) resp.add_stock_ids(std::move(id));
              const std::string key = NewId("op_");
              repo_.SaveOperation(tx, key, resp);
              return key;
            });
        if (!outcome.ok()) return outcome.status();
        if (!outcome->first && !repo_.LoadOperation(tx, outcome->id, resp)) {
          return absl::InternalError("operation answer missing");
        }
        return absl::OkStatus();
      }));
  std::vector<std::string> deleted(resp.stock_ids().begin(), resp.stock_ids().end());
  view.Forget(deleted);
  // A node nobody else wrote meanwhile is now exactly as the view has it; the others are
  // re-read by the next placement's sync.
  for (const auto& [node, generation] : bumped) {
    auto it = view.generations().find(node);
    if (it != view.generations().end() && it->second + 1 == generation) view.Advance(node);
  }
  out = std::move(resp);
  return absl::OkStatus();
}

absl::Status StockPool::ListStocks(const authz::Principal& p, const pb::ListStocksRequest& req,
                                   pb::ListStocksResponse& out) {
  GPUAAS_RETURN_IF_ERROR(authz::RequireRole(p, common::v1::ROLE_UNSPECIFIED));
  if (!req.spec_name().empty()) {
    GPUAAS_RETURN_IF_ERROR(ValidateSpecName("spec_name", req.spec_name()));
  }
  if (!pb::StockState_IsValid(req.state())) {
    return service::InvalidField("state", "unknown stock state");
  }
  if (req.node_id().size() > 253) return service::InvalidField("node_id", "too long");
  GPUAAS_ASSIGN_OR_RETURN(service::PageRequest page,
                          service::ParsePage(req.page_size(), req.page_token()));
  const Repository::StockFilter filter{
      .spec_name = req.spec_name(), .state = req.state(), .node_id = req.node_id()};
  return pool_.RunInTransaction("stock.list_stocks", [&](db::Tx& tx) {
    Repository::PlanForParameters(tx);
    service::FillPage(page, repo_.ListStocks(tx, filter, page), *out.mutable_stocks(),
                      *out.mutable_next_page_token(),
                      [](const pb::Stock& s) { return s.stock_id(); });
    return absl::OkStatus();
  });
}

absl::Status StockPool::SearchStocks(const authz::Principal& p, const pb::SearchStocksRequest& req,
                                     pb::SearchStocksResponse& out) {
  GPUAAS_RETURN_IF_ERROR(authz::RequireRole(p, common::v1::ROLE_UNSPECIFIED));
  GPUAAS_RETURN_IF_ERROR(service::ValidateRequired("query", req.query()));
  // Spec names hold only these characters, so the pattern needs no LIKE escaping.
  if (req.query().size() > 63 || !std::all_of(req.query().begin(), req.query().end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
      })) {
    return service::InvalidField("query", "a part of a spec name: [a-z0-9.-], at most 63");
  }
  GPUAAS_ASSIGN_OR_RETURN(service::PageRequest page,
                          service::ParsePage(req.page_size(), req.page_token()));
  const Repository::StockFilter filter{
      .spec_pattern = absl::StrCat(req.substring() ? "%" : "", req.query(), "%")};
  return pool_.RunInTransaction("stock.search_stocks", [&](db::Tx& tx) {
    Repository::PlanForParameters(tx);
    service::FillPage(page, repo_.ListStocks(tx, filter, page), *out.mutable_stocks(),
                      *out.mutable_next_page_token(),
                      [](const pb::Stock& s) { return s.stock_id(); });
    return absl::OkStatus();
  });
}

absl::Status StockPool::GetStockSummary(const authz::Principal& p,
                                        const pb::GetStockSummaryRequest& req,
                                        pb::GetStockSummaryResponse& out) {
  GPUAAS_RETURN_IF_ERROR(authz::RequireRole(p, common::v1::ROLE_UNSPECIFIED));
  if (!req.spec_name().empty()) {
    GPUAAS_RETURN_IF_ERROR(ValidateSpecName("spec_name", req.spec_name()));
  }
  return pool_.RunInTransaction("stock.stock_summary", [&](db::Tx& tx) -> absl::Status {
    Repository::PlanForParameters(tx);
    out.Clear();
    for (pb::StockCount& c : repo_.CountStocks(tx, req.spec_name())) {
      *out.add_counts() = std::move(c);
    }
    // A spec asked for by name gets its row even with no stocks.
    if (!req.spec_name().empty() && out.counts().empty()) {
      if (!repo_.GetSpec(tx, req.spec_name())) return SpecNotFound(req.spec_name());
      out.add_counts()->set_spec_name(req.spec_name());
    }
    return absl::OkStatus();
  });
}

absl::Status StockPool::ClaimStock(const authz::Principal& p, const pb::ClaimStockRequest& req,
                                   pb::Stock& out) {
  GPUAAS_RETURN_IF_ERROR(ValidateSpecName("spec_name", req.spec_name()));
  GPUAAS_RETURN_IF_ERROR(ValidateInstanceId(req.instance_id()));
  GPUAAS_RETURN_IF_ERROR(authz::RequirePower(p, authz::Power::kServiceCalls, "claiming stock"));
  const auto claim = [&](db::Tx& tx) -> absl::Status {
    if (std::optional<pb::Stock> held = repo_.StockOfInstance(tx, req.instance_id())) {
      if (held->spec_name() != req.spec_name()) {
        return absl::FailedPreconditionError(absl::StrCat("instance_id: ", req.instance_id(),
                                                          " already holds a stock of spec ",
                                                          held->spec_name()));
      }
      out = *std::move(held);
      return absl::OkStatus();
    }
    std::optional<pb::Stock> claimed =
        repo_.ClaimAvailable(tx, req.spec_name(), req.instance_id(), silence_);
    if (!claimed) {
      if (!repo_.GetSpec(tx, req.spec_name())) return SpecNotFound(req.spec_name());
      return absl::ResourceExhaustedError(
          absl::StrCat("no stock of spec ", req.spec_name(), " is available"));
    }
    out = *std::move(claimed);
    return absl::OkStatus();
  };
  absl::Status s = pool_.RunInTransaction("stock.claim_stock", claim);
  // Two claims for one instance raced: the loser's unique key failed; the winner's stock is
  // the answer.
  if (absl::IsAlreadyExists(s)) s = pool_.RunInTransaction("stock.claim_stock", claim);
  return s;
}

absl::Status StockPool::ReleaseStock(const authz::Principal& p, const pb::ReleaseStockRequest& req,
                                     pb::ReleaseStockResponse& out) {
  GPUAAS_RETURN_IF_ERROR(ValidateInstanceId(req.instance_id()));
  GPUAAS_RETURN_IF_ERROR(authz::RequirePower(p, authz::Power::kServiceCalls, "releasing stock"));
  std::string drained_node;
  GPUAAS_RETURN_IF_ERROR(pool_.RunInTransaction("stock.release_stock", [&](db::Tx& tx) {
    out.Clear();
    drained_node.clear();
    std::optional<Repository::Released> released = repo_.Release(tx, req.instance_id());
    if (!released) return absl::OkStatus();
    out.set_stock_id(released->stock_id);
    // A drained node keeps no stock its instance gave back.
    if (released->node_draining) {
      repo_.DeleteStocks(tx, {released->stock_id});
      repo_.BumpGeneration(tx, released->node_id);
      drained_node = released->node_id;
    }
    return absl::OkStatus();
  }));
  if (!drained_node.empty()) return keeper_.Reload({drained_node});
  return absl::OkStatus();
}

}  // namespace gpuaas::stock
