#include "tests/agent/fake_stock.h"

#include "libs/common/proto_time.h"

namespace gpuaas::agent::testing {

namespace {

std::string AuthorizationOf(const grpc::ServerContext& ctx) {
  auto it = ctx.client_metadata().find("authorization");
  return it == ctx.client_metadata().end() ? std::string()
                                           : std::string(it->second.data(), it->second.size());
}

}  // namespace

grpc::Status FakeNodeAgentService::RegisterNode(grpc::ServerContext* ctx,
                                                const stockpb::RegisterNodeRequest* req,
                                                stockpb::RegisterNodeResponse* resp) {
  const std::string authorization = AuthorizationOf(*ctx);
  if (req->node().node_id().empty()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "node.node_id: required");
  }
  absl::MutexLock lock(&mu_);
  registrations_.push_back({req->node(), authorization});
  known_.insert(req->node().node_id());
  *resp->mutable_node() = req->node();
  resp->mutable_node()->set_state(stockpb::NODE_STATE_READY);
  *resp->mutable_heartbeat_interval() = ToProtoDuration(heartbeat_interval_);
  return grpc::Status::OK;
}

grpc::Status FakeNodeAgentService::Heartbeat(
    grpc::ServerContext* ctx,
    grpc::ServerReaderWriter<stockpb::HeartbeatResponse, stockpb::HeartbeatRequest>* stream) {
  {
    absl::MutexLock lock(&mu_);
    stream_authorizations_.push_back(AuthorizationOf(*ctx));
  }
  stockpb::HeartbeatRequest req;
  while (stream->Read(&req)) {
    {
      absl::MutexLock lock(&mu_);
      if (known_.count(req.node_id()) == 0) {
        return grpc::Status(grpc::StatusCode::NOT_FOUND,
                            "node " + req.node_id() + " is not registered");
      }
      heartbeats_.push_back(req);
    }
    stockpb::HeartbeatResponse resp;
    resp.set_state(stockpb::NODE_STATE_READY);
    if (!stream->Write(resp)) {
      break;
    }
  }
  return grpc::Status::OK;
}

void FakeNodeAgentService::Forget(const std::string& node_id) {
  absl::MutexLock lock(&mu_);
  known_.erase(node_id);
}

std::vector<Registration> FakeNodeAgentService::registrations() const {
  absl::MutexLock lock(&mu_);
  return registrations_;
}

std::vector<std::string> FakeNodeAgentService::stream_authorizations() const {
  absl::MutexLock lock(&mu_);
  return stream_authorizations_;
}

std::vector<stockpb::HeartbeatRequest> FakeNodeAgentService::heartbeats() const {
  absl::MutexLock lock(&mu_);
  return heartbeats_;
}

bool FakeNodeAgentService::WaitFor(
    const std::function<bool(const std::vector<Registration>&,
                             const std::vector<stockpb::HeartbeatRequest>&)>& pred,
    absl::Duration timeout) const {
  absl::MutexLock lock(&mu_);
  auto holds = [&] { return pred(registrations_, heartbeats_); };
  return mu_.AwaitWithTimeout(absl::Condition(&holds), timeout);
}

FakeStock::FakeStock(int port, bool implemented, absl::Duration heartbeat_interval)
    : service_(heartbeat_interval) {
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:" + std::to_string(port), grpc::InsecureServerCredentials());
  if (implemented) {
    builder.RegisterService(&service_);
  }
  server_ = builder.BuildAndStart();
}

FakeStock::~FakeStock() {
  if (server_ != nullptr) {
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(200));
  }
}

}  // namespace gpuaas::agent::testing
