// nodes list|get|cordon|uncordon|drain
#include <memory>

#include "tools/gpuaasctl/commands.h"
#include "tools/gpuaasctl/stock_tables.h"

namespace gpuaas::ctl {
namespace {

struct NodeFlags {
  std::string node_id;
  PageFlags page;
};

// cordon, uncordon and drain: a node id in, the node out.
template <class Req>
void AddNodeAction(CLI::App* group, Context& ctx, const std::string& name, const std::string& help,
                   Session::StockMethod<Req, stockpb::Node> method) {
  auto flags = std::make_shared<NodeFlags>();
  CLI::App* sub = group->add_subcommand(name, help);
  sub->add_option("node", flags->node_id, "node id")->required();
  OnRun(sub, ctx, [&ctx, flags, method](Session& s) {
    Req req;
    req.set_node_id(flags->node_id);
    GPUAAS_ASSIGN_OR_RETURN(stockpb::Node resp, s.Call(method, req));
    return ctx.Print(resp, [&] { return OneRow(resp, &NodeTable); });
  });
}

}  // namespace

void AddNodeCommands(CLI::App& root, Context& ctx) {
  CLI::App* group =
      root.add_subcommand("nodes", "inspect GPU nodes and take them in and out of placement")
          ->require_subcommand(1);

  auto list = std::make_shared<NodeFlags>();
  CLI::App* sub = group->add_subcommand("list", "list nodes");
  AddPageFlags(sub, list->page);
  OnRun(sub, ctx, [&ctx, list](Session& s) {
    stockpb::ListNodesResponse resp;
    GPUAAS_RETURN_IF_ERROR(
        ListPages(s, &StockClient::ListNodes, stockpb::ListNodesRequest(), list->page, resp));
    return ctx.Print(resp, [&] { return NodeTable(resp.nodes()); });
  });

  auto get = std::make_shared<NodeFlags>();
  sub = group->add_subcommand("get", "show a node and its GPUs with their last readings");
  sub->add_option("node", get->node_id, "node id")->required();
  OnRun(sub, ctx, [&ctx, get](Session& s) {
    stockpb::GetNodeRequest req;
    req.set_node_id(get->node_id);
    GPUAAS_ASSIGN_OR_RETURN(stockpb::Node resp, s.Call(&StockClient::GetNode, req));
    return ctx.Print(resp, [&] { return NodeDetail(resp); });
  });

  AddNodeAction(group, ctx, "cordon", "no new stocks on the node; existing ones stay",
                &StockClient::CordonNode);
  AddNodeAction(group, ctx, "uncordon", "put a cordoned node back into placement",
                &StockClient::UncordonNode);
  AddNodeAction(group, ctx, "drain", "cordon the node and delete its available stocks",
                &StockClient::DrainNode);
}

}  // namespace gpuaas::ctl
