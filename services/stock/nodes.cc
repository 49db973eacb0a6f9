#include "services/stock/nodes.h"

#include "absl/strings/str_cat.h"
#include "libs/common/logging.h"
#include "libs/common/proto_time.h"
#include "libs/common/status_macros.h"
#include "libs/service/paging.h"
#include "libs/service/validate.h"
#include "services/stock/node_rules.h"

namespace gpuaas::stock {
namespace {

absl::Status NodeNotFound(const std::string& id) {
  return absl::NotFoundError(absl::StrCat("node ", id, " not found"));
}

constexpr std::string_view kNodeCalls = "node registration and heartbeats";

}  // namespace

absl::Status NodeInventory::RegisterNode(const authz::Principal& p,
                                         const pb::RegisterNodeRequest& req,
                                         pb::RegisterNodeResponse& out) {
  GPUAAS_RETURN_IF_ERROR(authz::RequirePower(p, authz::Power::kNodeCalls, kNodeCalls));
  GPUAAS_ASSIGN_OR_RETURN(NodeCapacity capacity, ValidateNodeRegistration(req.node()));
  GPUAAS_RETURN_IF_ERROR(authz::RequireNode(p, req.node().node_id(), kNodeCalls));
  const std::string& id = req.node().node_id();
  GPUAAS_RETURN_IF_ERROR(pool_.RunInTransaction("stock.register_node", [&](db::Tx& tx) {
    repo_.UpsertNode(tx, req.node(), capacity.cpu_millis, capacity.memory_bytes,
                     capacity.disk_bytes);
    repo_.RefreshStockStates(tx, id);
    std::optional<pb::Node> stored = repo_.GetNode(tx, id);
    if (!stored) return absl::InternalError("registered node vanished");
    *out.mutable_node() = *std::move(stored);
    return absl::OkStatus();
  }));
  *out.mutable_heartbeat_interval() = ToProtoDuration(timings_.heartbeat_interval);
  Logger("stock")->info("node {} registered: {} GPUs, agent {}", id, req.node().gpus_size(),
                        req.node().agent_version());
  return keeper_.Reload({id});
}

absl::StatusOr<std::unique_ptr<NodeInventory::HeartbeatStream>> NodeInventory::OpenHeartbeatStream(
    const authz::Principal& p) {
  GPUAAS_RETURN_IF_ERROR(authz::RequirePower(p, authz::Power::kNodeCalls, kNodeCalls));
  return std::make_unique<HeartbeatStream>(*this, p);
}

absl::Status NodeInventory::HeartbeatStream::OnHeartbeat(const pb::HeartbeatRequest& req,
                                                         pb::HeartbeatResponse& out) {
  GPUAAS_RETURN_IF_ERROR(service::ValidateNodeId("node_id", req.node_id()));
  if (!node_id_.empty() && req.node_id() != node_id_) {
    return service::InvalidField("node_id", "one stream carries one node's heartbeats");
  }
  GPUAAS_RETURN_IF_ERROR(authz::RequireNode(caller_, req.node_id(), kNodeCalls));
  node_id_ = req.node_id();
  // GPUs whose health differs from what this stream wrote last (all of them at first).
  std::vector<const pb::GpuMetrics*> changed;
  for (const pb::GpuMetrics& g : req.gpus()) {
    auto it = written_.find(g.uuid());
    if (it == written_.end() || it->second != std::make_pair(g.healthy(), g.last_xid())) {
      changed.push_back(&g);
    }
  }
  bool placement_changed = false;
  GPUAAS_RETURN_IF_ERROR(
      nodes_.pool_.RunInTransaction("stock.heartbeat", [&](db::Tx& tx) -> absl::Status {
        placement_changed = false;
        std::optional<Repository::NodeStatus> status = nodes_.repo_.RecordHeartbeat(tx, req);
        if (!status) {
          return absl::NotFoundError(
              absl::StrCat("node ", req.node_id(), " is not registered: register again"));
        }
        if (!status->ready && nodes_.repo_.MarkReady(tx, req.node_id())) placement_changed = true;
        bool health_changed = false;
        for (const pb::GpuMetrics* g : changed) {
          health_changed |=
              nodes_.repo_.SetGpuHealth(tx, req.node_id(), g->uuid(), g->healthy(), g->last_xid());
        }
        if (health_changed) nodes_.repo_.BumpGeneration(tx, req.node_id());
        placement_changed |= health_changed;
        if (placement_changed) nodes_.repo_.RefreshStockStates(tx, req.node_id());
        out.set_state(pb::NODE_STATE_READY);
        out.set_cordoned(status->cordoned);
        return absl::OkStatus();
      }));
  for (const pb::GpuMetrics* g : changed) {
    if (!g->healthy()) {
      Logger("stock")->warn("node {} GPU {} unhealthy (XID {}): out of placement", req.node_id(),
                            g->uuid(), g->last_xid());
    } else if (written_.contains(g->uuid()) && !written_[g->uuid()].first) {
      Logger("stock")->info("node {} GPU {} healthy again", req.node_id(), g->uuid());
    }
    written_[g->uuid()] = {g->healthy(), g->last_xid()};
  }
  if (placement_changed) return nodes_.keeper_.Reload({req.node_id()});
  return absl::OkStatus();
}

absl::Status NodeInventory::ListNodes(const authz::Principal& p, const pb::ListNodesRequest& req,
                                      pb::ListNodesResponse& out) {
  GPUAAS_RETURN_IF_ERROR(authz::RequireRole(p, common::v1::ROLE_UNSPECIFIED));
  GPUAAS_ASSIGN_OR_RETURN(service::PageRequest page,
                          service::ParsePage(req.page_size(), req.page_token()));
  return pool_.RunInTransaction("stock.list_nodes", [&](db::Tx& tx) {
    service::FillPage(page, repo_.ListNodes(tx, page), *out.mutable_nodes(),
                      *out.mutable_next_page_token(),
                      [](const pb::Node& n) { return n.node_id(); });
    return absl::OkStatus();
  });
}

absl::Status NodeInventory::GetNode(const authz::Principal& p, const pb::GetNodeRequest& req,
                                    pb::Node& out) {
  GPUAAS_RETURN_IF_ERROR(service::ValidateNodeId("node_id", req.node_id()));
  GPUAAS_RETURN_IF_ERROR(authz::RequireRole(p, common::v1::ROLE_UNSPECIFIED));
  return pool_.RunInTransaction("stock.get_node", [&](db::Tx& tx) -> absl::Status {
    std::optional<pb::Node> node = repo_.GetNode(tx, req.node_id());
    if (!node) return NodeNotFound(req.node_id());
    out = *std::move(node);
    return absl::OkStatus();
  });
}

absl::Status NodeInventory::SetCordon(const authz::Principal& p, const std::string& node_id,
                                      bool cordoned, bool drain, pb::Node& out) {
  GPUAAS_RETURN_IF_ERROR(service::ValidateNodeId("node_id", node_id));
  GPUAAS_RETURN_IF_ERROR(authz::RequirePlatformAdmin(p));
  GPUAAS_RETURN_IF_ERROR(pool_.RunInTransaction("stock.cordon_node", [&](db::Tx& tx) {
    if (!repo_.SetCordon(tx, node_id, cordoned, drain)) return NodeNotFound(node_id);
    if (drain) repo_.DeleteStocks(tx, repo_.LockUnclaimedOnNode(tx, node_id));
    out = *repo_.GetNode(tx, node_id);
    return absl::OkStatus();
  }));
  Logger("stock")->info("node {} {}", node_id,
                        drain ? "drained" : (cordoned ? "cordoned" : "uncordoned"));
  return keeper_.Reload({node_id});
}

absl::Status NodeInventory::CordonNode(const authz::Principal& p, const pb::CordonNodeRequest& req,
                                       pb::Node& out) {
  return SetCordon(p, req.node_id(), /*cordoned=*/true, /*drain=*/false, out);
}

absl::Status NodeInventory::UncordonNode(const authz::Principal& p,
                                         const pb::UncordonNodeRequest& req, pb::Node& out) {
  return SetCordon(p, req.node_id(), /*cordoned=*/false, /*drain=*/false, out);
}

absl::Status NodeInventory::DrainNode(const authz::Principal& p, const pb::DrainNodeRequest& req,
                                      pb::Node& out) {
  return SetCordon(p, req.node_id(), /*cordoned=*/true, /*drain=*/true, out);
}

absl::Status NodeInventory::MarkLostNodes() {
  std::vector<std::string> lost;
  GPUAAS_RETURN_IF_ERROR(pool_.RunInTransaction("stock.mark_lost_nodes", [&](db::Tx& tx) {
    lost = repo_.MarkLostNodes(tx, silence_);
    for (const std::string& id : lost) repo_.RefreshStockStates(tx, id);
    return absl::OkStatus();
  }));
  for (const std::string& id : lost) {
    Logger("stock")->warn("node {} NOT_READY: no heartbeat for {}", id,
                          absl::FormatDuration(timings_.node_timeout));
  }
  return keeper_.Reload(lost);
}

std::unique_ptr<PeriodicTask> NodeInventory::StartHeartbeatWatch() {
  return std::make_unique<PeriodicTask>(
      PeriodicTask::Options{.interval =
                                std::max(timings_.node_timeout / 4, absl::Milliseconds(50))},
      [this] {
        if (absl::Status s = MarkLostNodes(); !s.ok()) {
          Logger("stock")->warn("node timeout check: {}", s.ToString());
        }
      });
}

}  // namespace gpuaas::stock
