#include "services/proxy/route_watcher.h"

#include <algorithm>
#include <vector>

#include "libs/common/logging.h"
#include "libs/rpc/status.h"

namespace gpuaas::proxy {

namespace instancepb = ::gpuaas::instance::v1;

RouteWatcher::RouteWatcher(std::shared_ptr<grpc::Channel> instance_channel,
                           client::AccessTokens& tokens, RouteTable& routes)
    : stub_(instancepb::InstanceService::NewStub(instance_channel)),
      tokens_(tokens),
      routes_(routes) {}

void RouteWatcher::Stop() {
  absl::MutexLock lock(&mu_);
  stop_ = true;
  if (active_ != nullptr) {
    active_->TryCancel();
  }
}

bool RouteWatcher::Sleep(absl::Duration d) {
  absl::MutexLock lock(&mu_);
  mu_.AwaitWithTimeout(absl::Condition(&stop_), d);
  return !stop_;
}

absl::Status RouteWatcher::ListAll(const std::string& token) {
  std::vector<instancepb::Instance> all;
  int64_t revision = -1;
  instancepb::ListInstancesRequest req;
  req.set_page_size(500);
  do {
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(20)));
    ctx.AddMetadata("authorization", "Bearer " + token);
    instancepb::ListInstancesResponse page;
    if (grpc::Status s = stub_->ListInstances(&ctx, req, &page); !s.ok()) {
      return rpc::FromGrpcStatus(s);
    }
    // Pages are read at different revisions: watching from the earliest replays changes,
    // which upserts apply idempotently, and misses none.
    revision = revision < 0 ? page.revision() : std::min(revision, page.revision());
    for (instancepb::Instance& i : *page.mutable_instances()) {
      all.push_back(std::move(i));
    }
    req.set_page_token(page.next_page_token());
  } while (!req.page_token().empty());
  routes_.Replace(all);
  revision_ = std::max<int64_t>(revision, 0);
  Logger("proxy")->info("listed {} instances at revision {}", all.size(), revision_);
  return absl::OkStatus();
}

absl::Status RouteWatcher::WatchOnce(const std::string& token) {
  grpc::ClientContext ctx;
  ctx.AddMetadata("authorization", "Bearer " + token);
  {
    absl::MutexLock lock(&mu_);
    if (stop_) {
      return absl::CancelledError("stopped");
    }
    active_ = &ctx;
  }
  instancepb::WatchInstancesRequest req;
  req.set_since_revision(revision_);
  std::unique_ptr<grpc::ClientReader<instancepb::InstanceChange>> reader =
      stub_->WatchInstances(&ctx, req);
  instancepb::InstanceChange change;
  bool refresh = false;
  while (reader->Read(&change)) {
    routes_.Apply(change);
    revision_ = std::max(revision_, change.revision());
    if (change.type() == instancepb::InstanceChange::TYPE_SYNCED) {
      Logger("proxy")->debug("routes synced at revision {} ({} routed)", change.revision(),
                             routes_.size());
    }
    if (tokens_.RefreshDue()) {
      refresh = true;  // reopen with a fresh token before this one expires
      ctx.TryCancel();
    }
  }
  const grpc::Status status = reader->Finish();
  {
    absl::MutexLock lock(&mu_);
    active_ = nullptr;
  }
  if (refresh) {
    return absl::OkStatus();
  }
  return status.ok() ? absl::UnavailableError("watch ended") : rpc::FromGrpcStatus(status);
}

void RouteWatcher::Run() {
  auto log = Logger("proxy");
  absl::Duration backoff = absl::Milliseconds(100);
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      if (stop_) {
        return;
      }
    }
    absl::StatusOr<std::string> token = tokens_.Get();
    absl::Status s = token.ok() ? WatchOnce(*token) : token.status();
    if (s.ok()) {
      backoff = absl::Milliseconds(100);
      continue;
    }
    if (s.code() == absl::StatusCode::kOutOfRange && token.ok()) {
      s = ListAll(*token);
      if (s.ok()) {
        continue;
      }
    }
    if (s.code() == absl::StatusCode::kUnauthenticated) {
      tokens_.Invalidate();
    }
    log->warn("watching instances: {}; again in {}", s.ToString(), absl::FormatDuration(backoff));
    if (!Sleep(backoff)) {
      return;
    }
    backoff = std::min(backoff * 2, absl::Seconds(5));
  }
}

}  // namespace gpuaas::proxy
