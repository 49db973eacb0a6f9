// Nodes: registered and kept alive by their agents (RegisterNode, the Heartbeat stream), read
// by everyone, cordoned, uncordoned and drained by platform admins. A node not heard from for
// `node_timeout` (counted from this replica's start at the earliest: NodeSilence) turns
// NOT_READY and its unclaimed stocks UNAVAILABLE until it returns; an unhealthy GPU takes its
// unclaimed stocks out of the pool until its agent reports it healthy.
// Every change that placement must see bumps the node's generation and is re-read into the
// ClusterView.
//
// Methods block on PostgreSQL; errors as stock.proto documents for each RPC.
#pragma once

#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "gpuaas/stock/v1/stock.pb.h"
#include "libs/authz/principal.h"
#include "libs/common/periodic_task.h"
#include "libs/db/db.h"
#include "services/stock/repository.h"
#include "services/stock/view_keeper.h"

namespace gpuaas::stock {

struct NodeTimings {
  absl::Duration heartbeat_interval = absl::Seconds(2);  // told to agents at registration
  absl::Duration node_timeout = absl::Seconds(10);       // silence before NOT_READY
};

class NodeInventory final {
 public:
  // `listening_since`: when this replica started (NodeSilence).
  NodeInventory(db::Pool& pool, Repository& repo, ViewKeeper& keeper, NodeTimings timings,
                absl::Time listening_since)
      : pool_(pool),
        repo_(repo),
        keeper_(keeper),
        timings_(timings),
        silence_{.timeout = timings.node_timeout, .listening_since = listening_since} {}

  absl::Status RegisterNode(const authz::Principal& p, const pb::RegisterNodeRequest& req,
                            pb::RegisterNodeResponse& out);

  // One agent's Heartbeat stream. The first heartbeat of a stream always writes the GPUs'
  // health; later ones only when it changed.
  class HeartbeatStream final {
   public:
    HeartbeatStream(NodeInventory& nodes, authz::Principal caller)
        : nodes_(nodes), caller_(std::move(caller)) {}
    // NOT_FOUND when the node is not registered: the agent registers again. PERMISSION_DENIED
    // for a node the caller may not act for (authz::RequireNode).
    absl::Status OnHeartbeat(const pb::HeartbeatRequest& req, pb::HeartbeatResponse& out);

   private:
    NodeInventory& nodes_;
    const authz::Principal caller_;
    std::string node_id_;
    // The health last written, by GPU uuid: (healthy, last_xid).
    absl::flat_hash_map<std::string, std::pair<bool, int32_t>> written_;
  };
  // Authorizes the caller for a Heartbeat stream.
  absl::StatusOr<std::unique_ptr<HeartbeatStream>> OpenHeartbeatStream(const authz::Principal& p);

  absl::Status ListNodes(const authz::Principal& p, const pb::ListNodesRequest& req,
                         pb::ListNodesResponse& out);
  absl::Status GetNode(const authz::Principal& p, const pb::GetNodeRequest& req, pb::Node& out);
  absl::Status CordonNode(const authz::Principal& p, const pb::CordonNodeRequest& req,
                          pb::Node& out);
  absl::Status UncordonNode(const authz::Principal& p, const pb::UncordonNodeRequest& req,
                            pb::Node& out);
  absl::Status DrainNode(const authz::Principal& p, const pb::DrainNodeRequest& req, pb::Node& out);

  // Marks the nodes silent for longer than the timeout NOT_READY and their stocks UNAVAILABLE;
  // for one timeout after this replica started, none (NodeSilence says why). The service runs
  // it periodically (every replica may: it is idempotent).
  absl::Status MarkLostNodes();
  // When a silent node counts as lost; claims judge nodes by it too.
  const NodeSilence& silence() const { return silence_; }
  // Runs MarkLostNodes a few times per node timeout on the returned task's thread, until the
  // task is stopped or destroyed. Never blocks.
  std::unique_ptr<PeriodicTask> StartHeartbeatWatch();

 private:
  // Cordons or uncordons, deleting the node's unclaimed stocks when draining.
  absl::Status SetCordon(const authz::Principal& p, const std::string& node_id, bool cordoned,
                         bool drain, pb::Node& out);

  db::Pool& pool_;
  Repository& repo_;
  ViewKeeper& keeper_;
  NodeTimings timings_;
  NodeSilence silence_;
};

}  // namespace gpuaas::stock
