// WatchInstances: every open watch follows the rows of its tenant (or all, for global roles)
// by revision. One LISTEN instance_changes per process wakes them all; each then reads what
// changed after the last revision it sent, so nothing is missed between notifications, across a
// lost listener connection (its reconnect wakes everyone), or between the initial read and the
// first notification.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "absl/synchronization/mutex.h"
#include "gpuaas/instance/v1/instance.pb.h"
#include "libs/authz/principal.h"
#include "libs/db/db.h"
#include "libs/db/notify_listener.h"
#include "libs/rpc/server_stream.h"

namespace gpuaas::instance {

namespace pb = ::gpuaas::instance::v1;

class InstanceWatches final {
 public:
  // `listen_dsn` for the listener's own connection.
  InstanceWatches(db::Pool& pool, std::string listen_dsn);
  ~InstanceWatches();

  void Start();
  void Stop();

  // A new watch: the initial changes and SYNCED are queued before it returns. Errors:
  // OUT_OF_RANGE (since_revision older than the purged tombstones), NOT_FOUND (another
  // tenant's tenant_id).
  absl::StatusOr<std::unique_ptr<rpc::PushSession>> Open(
      const authz::Principal& p, const pb::WatchInstancesRequest& req,
      std::shared_ptr<rpc::StreamWriter<pb::InstanceChange>> out);

 private:
  struct Watch;
  class Session;

  // Sends what changed for `w` since its last revision. False when its stream is gone.
  bool CatchUp(Watch& w);
  void WakeAll();
  void Forget(Watch* w);

  db::Pool& pool_;
  db::NotifyListener listener_;
  absl::Mutex mu_;
  std::map<Watch*, std::shared_ptr<Watch>> watches_ ABSL_GUARDED_BY(mu_);
};

}  // namespace gpuaas::instance
