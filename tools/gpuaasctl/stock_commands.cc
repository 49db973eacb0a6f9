// stocks create|delete|list|search|summary|claim|release
#include <memory>

#include "absl/strings/str_cat.h"
#include "tools/gpuaasctl/commands.h"
#include "tools/gpuaasctl/stock_names.h"
#include "tools/gpuaasctl/stock_tables.h"

namespace gpuaas::ctl {
namespace {

struct StockFlags {
  std::string spec_name;
  int number = 0;
  std::string operation_id;
  bool allow_partial = false;
  std::string state;
  std::string node_id;
  std::string query;
  bool substring = false;
  std::string instance_id;
  PageFlags page;
};

// The server allows 1 to 10000 per call (stock.proto).
constexpr int kMaxStocksPerCall = 10000;

absl::Status Create(Context& ctx, Session& s, const StockFlags& f) {
  stockpb::CreateStocksRequest req;
  req.set_spec_name(f.spec_name);
  req.set_number(f.number);
  req.set_allow_partial(f.allow_partial);
  const std::string operation_id = RequestIdOrNew(f.operation_id);
  req.set_operation_id(operation_id);
  GPUAAS_ASSIGN_OR_RETURN(stockpb::CreateStocksResponse resp,
                          s.Call(&StockClient::CreateStocks, req));
  return ctx.Print(resp, [&] { return CreateStocksText(resp, f.number, operation_id); });
}

absl::Status Delete(Context& ctx, Session& s, const StockFlags& f) {
  stockpb::DeleteStocksRequest req;
  req.set_spec_name(f.spec_name);
  req.set_number(f.number);
  const std::string operation_id = RequestIdOrNew(f.operation_id);
  req.set_operation_id(operation_id);
  GPUAAS_ASSIGN_OR_RETURN(stockpb::DeleteStocksResponse resp,
                          s.Call(&StockClient::DeleteStocks, req));
  return ctx.Print(resp, [&] { return DeleteStocksText(resp, f.number, operation_id); });
}

absl::Status List(Context& ctx, Session& s, const StockFlags& f) {
  stockpb::ListStocksRequest req;
  req.set_spec_name(f.spec_name);
  req.set_node_id(f.node_id);
  if (!f.state.empty()) {
    GPUAAS_ASSIGN_OR_RETURN(StockState state, ParseStockState("--state", f.state));
    req.set_state(state);
  }
  stockpb::ListStocksResponse resp;
  GPUAAS_RETURN_IF_ERROR(ListPages(s, &StockClient::ListStocks, req, f.page, resp));
  return ctx.Print(resp, [&] { return StockTable(resp.stocks()); });
}

absl::Status Summary(Context& ctx, Session& s, const StockFlags& f) {
  stockpb::GetStockSummaryRequest req;
  req.set_spec_name(f.spec_name);
  GPUAAS_ASSIGN_OR_RETURN(stockpb::GetStockSummaryResponse resp,
                          s.Call(&StockClient::GetStockSummary, req));
  return ctx.Print(resp, [&] { return StockSummaryTable(resp); });
}

void AddNumberAndOperation(CLI::App* sub, StockFlags& f, const std::string& what) {
  sub->add_option("--spec", f.spec_name, "spec name")->required();
  sub->add_option("-n,--number", f.number, what)
      ->required()
      ->check(CLI::Range(1, kMaxStocksPerCall));
  sub->add_option("--operation-id", f.operation_id,
                  "idempotency key: a retry with the same id changes nothing (default: random)");
}

}  // namespace

void AddStockCommands(CLI::App& root, Context& ctx) {
  CLI::App* group =
      root.add_subcommand("stocks", "manage stocks, the pre-placed capacity of each spec")
          ->require_subcommand(1);

  auto create = std::make_shared<StockFlags>();
  CLI::App* sub = group->add_subcommand("create", "place stocks of a spec on ready nodes");
  AddNumberAndOperation(sub, *create, "how many stocks to place (1..10000)");
  sub->add_flag("--allow-partial", create->allow_partial,
                "place what fits when not all do, instead of nothing");
  OnRun(sub, ctx, [&ctx, create](Session& s) { return Create(ctx, s, *create); });

  auto del = std::make_shared<StockFlags>();
  sub = group->add_subcommand("delete", "remove available stocks of a spec");
  AddNumberAndOperation(sub, *del, "how many stocks to remove at most (1..10000)");
  OnRun(sub, ctx, [&ctx, del](Session& s) { return Delete(ctx, s, *del); });

  auto list = std::make_shared<StockFlags>();
  sub = group->add_subcommand("list", "list stocks");
  sub->add_option("--spec", list->spec_name, "only stocks of this spec");
  sub->add_option("--state", list->state,
                  "only stocks in this state (available|claimed|unavailable|deleting)");
  sub->add_option("--node", list->node_id, "only stocks on this node");
  AddPageFlags(sub, list->page);
  OnRun(sub, ctx, [&ctx, list](Session& s) { return List(ctx, s, *list); });

  auto search = std::make_shared<StockFlags>();
  sub = group->add_subcommand("search", "stocks whose spec name starts with (or contains) QUERY");
  sub->add_option("query", search->query, "a spec name prefix")->required();
  sub->add_flag("--substring", search->substring, "match anywhere in the spec name");
  AddPageFlags(sub, search->page);
  OnRun(sub, ctx, [&ctx, search](Session& s) {
    stockpb::SearchStocksRequest req;
    req.set_query(search->query);
    req.set_substring(search->substring);
    stockpb::SearchStocksResponse resp;
    GPUAAS_RETURN_IF_ERROR(ListPages(s, &StockClient::SearchStocks, req, search->page, resp));
    return ctx.Print(resp, [&] { return StockTable(resp.stocks()); });
  });

  auto summary = std::make_shared<StockFlags>();
  sub = group->add_subcommand("summary", "stocks per spec by state");
  sub->add_option("--spec", summary->spec_name, "only this spec");
  OnRun(sub, ctx, [&ctx, summary](Session& s) { return Summary(ctx, s, *summary); });

  auto claim = std::make_shared<StockFlags>();
  sub = group->add_subcommand(
      "claim", "claim a stock for an instance by hand (the instance service does this; to test)");
  sub->add_option("--spec", claim->spec_name, "spec name")->required();
  sub->add_option("--instance", claim->instance_id,
                  "the instance that holds it; a retry with the same id returns the same stock")
      ->required();
  OnRun(sub, ctx, [&ctx, claim](Session& s) {
    stockpb::ClaimStockRequest req;
    req.set_spec_name(claim->spec_name);
    req.set_instance_id(claim->instance_id);
    GPUAAS_ASSIGN_OR_RETURN(stockpb::Stock resp, s.Call(&StockClient::ClaimStock, req));
    return ctx.Print(resp, [&] { return OneRow(resp, &StockTable); });
  });

  auto release = std::make_shared<StockFlags>();
  sub = group->add_subcommand("release", "return an instance's stock to the pool (to clean up)");
  sub->add_option("--instance", release->instance_id, "the instance holding the stock")->required();
  OnRun(sub, ctx, [&ctx, release](Session& s) {
    stockpb::ReleaseStockRequest req;
    req.set_instance_id(release->instance_id);
    GPUAAS_ASSIGN_OR_RETURN(stockpb::ReleaseStockResponse resp,
                            s.Call(&StockClient::ReleaseStock, req));
    return ctx.Print(resp, [&] {
      if (resp.stock_id().empty()) {
        return absl::StrCat("instance ", release->instance_id, " held no stock\n");
      }
      return absl::StrCat("released stock ", resp.stock_id(), " from instance ",
                          release->instance_id, "\n");
    });
  });
}

}  // namespace gpuaas::ctl
