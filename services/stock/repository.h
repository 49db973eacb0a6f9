// All SQL of the stock service, each statement a named constant next to the method that runs it.
// Methods run inside the caller's transaction (db::Tx); errors are libs/db exceptions that
// db::Pool::RunInTransaction turns into a Status.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "gpuaas/stock/v1/stock.pb.h"
#include "libs/db/db.h"
#include "libs/service/paging.h"
#include "services/stock/cluster_view.h"
#include "services/stock/spec_rules.h"

namespace gpuaas::stock {

// How long a READY node may stay silent before it counts as lost: MarkLostNodes turns it
// NOT_READY and ClaimAvailable skips it. Silence runs from the node's last heartbeat or from
// `listening_since`, whichever is later. `listening_since` is when this replica started, in the
// database's clock as heartbeat times are: while no replica ran no agent could report, and a
// restart must not hold that gap against the nodes (it did: every node looked lost until its
// agent reported again, and claims in that gap failed instances with NO_CAPACITY for good).
// Agents report again within a timeout, so one timeout after the start every node is judged by
// its own heartbeats as before. The grace revives nothing: it keeps READY nodes READY, while a
// node NOT_READY (marked by another replica, say) stays so, claims still require READY, and
// cordons stay.
struct NodeSilence {
  absl::Duration timeout;
  absl::Time listening_since = absl::UnixEpoch();
};

class Repository final {
 public:
  // Plans this transaction's statements for their actual parameters. The optional filters
  // ("$2 = '' OR spec_name = $2") otherwise get PostgreSQL's generic plan after five runs on a
  // connection: a scan of every row instead of an index range.
  static void PlanForParameters(db::Tx& tx);

  // Specs. A spec row holds its demand as exact integers; the read side formats them.
  void InsertSpec(db::Tx& tx, const pb::Spec& spec, const SpecDemand& demand);
  std::optional<pb::Spec> GetSpec(db::Tx& tx, const std::string& spec_name);
  std::vector<pb::Spec> ListSpecs(db::Tx& tx, bool show_deprecated,
                                  const service::PageRequest& page);
  // Writes price, description and deprecated; false when the spec does not exist.
  bool UpdateSpec(db::Tx& tx, const pb::Spec& spec);
  bool DeleteSpec(db::Tx& tx, const std::string& spec_name);

  // Nodes as placement sees them (repository_nodes.cc): every node, or one.
  std::vector<NodeRecord> LoadNodeRecords(db::Tx& tx, const std::optional<std::string>& node_id);
  absl::flat_hash_map<std::string, int64_t> NodeGenerations(db::Tx& tx);
  // Bumps each node's generation if it still is the one `seen`; returns the nodes another
  // writer changed first (their guard failed; the caller rolls back).
  std::vector<std::string> GuardGenerations(
      db::Tx& tx, const std::vector<std::pair<std::string, int64_t>>& seen);
  // Bumps generations unconditionally (a change that placement must see); returns the new ones.
  std::vector<std::pair<std::string, int64_t>> BumpGenerations(
      db::Tx& tx, const std::vector<std::string>& node_ids);
  void BumpGeneration(db::Tx& tx, const std::string& node_id);

  // The node, its labels and GPUs as the agent registered them; READY, heartbeat now. GPUs
  // are keyed by index; those not in `node` are kept, not present. Blocks on the node's row.
  void UpsertNode(db::Tx& tx, const pb::Node& node, int64_t cpu_millis, int64_t memory_bytes,
                  int64_t disk_bytes);
  std::optional<pb::Node> GetNode(db::Tx& tx, const std::string& node_id);
  std::vector<pb::Node> ListNodes(db::Tx& tx, const service::PageRequest& page);

  struct NodeStatus {
    bool ready = false;
    bool cordoned = false;
  };
  // Stamps a heartbeat and keeps its readings; nullopt for an unknown node.
  std::optional<NodeStatus> RecordHeartbeat(db::Tx& tx, const pb::HeartbeatRequest& heartbeat);
  // Writes a GPU's health verdict; false for an unknown GPU.
  bool SetGpuHealth(db::Tx& tx, const std::string& node_id, const std::string& uuid, bool healthy,
                    int32_t last_xid);
  // READY again; true when it was not.
  bool MarkReady(db::Tx& tx, const std::string& node_id);
  // READY nodes silent for longer than `silence` allows turn NOT_READY; returns them.
  std::vector<std::string> MarkLostNodes(db::Tx& tx, const NodeSilence& silence);
  // The database's clock (NodeSilence::listening_since).
  absl::Time DatabaseNow(db::Tx& tx);
  // Every node's id and whether it is READY, by node id (NodeStateMetrics).
  std::vector<std::pair<std::string, bool>> NodeReadiness(db::Tx& tx);
  // Sets cordoned (and draining); false for an unknown node.
  bool SetCordon(db::Tx& tx, const std::string& node_id, bool cordoned, bool draining);
  // Re-derives AVAILABLE/UNAVAILABLE for the node's unclaimed stocks from its readiness and
  // its GPUs' health.
  void RefreshStockStates(db::Tx& tx, const std::string& node_id);

  // Stocks (repository_stocks.cc). Inserts AVAILABLE stocks, stock_ids[i] holding
  // placements[i].
  void InsertStocks(db::Tx& tx, const std::vector<std::string>& stock_ids,
                    const std::string& spec_name, const std::vector<sched::Placement>& placements);
  std::vector<StockRecord> LoadStockRecords(db::Tx& tx, const std::optional<std::string>& node_id);
  // Reads stocks as the API shows them.
  std::vector<pb::Stock> GetStocks(db::Tx& tx, const std::vector<std::string>& stock_ids);
  struct StockFilter {
    std::string spec_name;  // empty = any
    pb::StockState state = pb::STOCK_STATE_UNSPECIFIED;
    std::string node_id;       // empty = any
    std::string spec_pattern;  // SQL LIKE pattern on spec_name, escaped; empty = any
  };
  std::vector<pb::Stock> ListStocks(db::Tx& tx, const StockFilter& filter,
                                    const service::PageRequest& page);
  std::vector<pb::StockCount> CountStocks(db::Tx& tx, const std::string& spec_name);
  std::optional<pb::Stock> StockOfInstance(db::Tx& tx, const std::string& instance_id);
  // Claims one AVAILABLE stock of the spec on a READY node not silent for longer than `silence`
  // allows, skipping rows other claims hold; nullopt when none is left.
  std::optional<pb::Stock> ClaimAvailable(db::Tx& tx, const std::string& spec_name,
                                          const std::string& instance_id,
                                          const NodeSilence& silence);
  struct Released {
    std::string stock_id;
    std::string node_id;
    bool node_draining = false;
  };
  // Returns the instance's stock to the pool (AVAILABLE, or UNAVAILABLE on a node that is not
  // ready); nullopt when it holds none.
  std::optional<Released> Release(db::Tx& tx, const std::string& instance_id);
  // Locks the unclaimed stocks of a spec, skipping rows other calls hold.
  struct Unclaimed {
    std::vector<std::string> unavailable;
    std::vector<std::string> available;
  };
  Unclaimed LockUnclaimedOfSpec(db::Tx& tx, const std::string& spec_name);
  // Locks the unclaimed stocks on a node, skipping rows other calls hold.
  std::vector<std::string> LockUnclaimedOnNode(db::Tx& tx, const std::string& node_id);
  // Deletes stocks; returns the node of each one deleted.
  std::vector<std::string> DeleteStocks(db::Tx& tx, const std::vector<std::string>& stock_ids);

  // The first answer of an operation, kept for its retries.
  void SaveOperation(db::Tx& tx, const std::string& key, const google::protobuf::Message& response);
  bool LoadOperation(db::Tx& tx, const std::string& key, google::protobuf::Message& response);
};

}  // namespace gpuaas::stock
