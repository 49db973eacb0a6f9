#include "services/proxy/route_watcher.h"

#include <algorithm>
#include <string>
#include <vector>

#include "libs/common/backoff.h"
#include "libs/common/logging.h"

namespace gpuaas::proxy {

namespace instancepb = ::gpuaas::instance::v1;

// The deadline of each page of a full listing.
constexpr absl::Duration kListTimeout = absl::Seconds(20);

RouteWatcher::RouteWatcher(std::shared_ptr<grpc::Channel> instance_channel,
                           client::AccessTokens& tokens, RouteTable& routes)
    : instances_(instance_channel, kListTimeout, &tokens),
      access_(std::move(instance_channel), tokens),
      routes_(routes) {}

void RouteWatcher::Stop() {
  stop_.Stop();
  cancel_.Cancel();
}

absl::StatusOr<std::string> RouteWatcher::ProxyTokenFor(const instancepb::Instance& instance,
                                                        bool reuse) {
  if (!RouteTable::Routes(instance)) {
    return std::string();
  }
  // An instance routed already keeps its token (made once, at create); a listing fetches
  // afresh, since a missed deletion may have given the id to a new instance.
  if (reuse) {
    if (std::string known = routes_.ProxyTokenOf(instance.instance_id()); !known.empty()) {
      return known;
    }
  }
  instancepb::GetProxyTokenRequest req;
  req.set_instance_id(instance.instance_id());
  absl::StatusOr<instancepb::ProxyToken> token =
      access_.GetProxyToken(req, client::CallContext().set_cancellation(cancel_));
  if (absl::IsNotFound(token.status())) {
    // Deleted since this change: its deletion follows. Routed without a token meanwhile, its
    // catalog server refuses the requests (fails closed).
    return std::string();
  }
  if (!token.ok()) {
    return absl::Status(token.status().code(), "proxy token of " + instance.instance_id() + ": " +
                                                   std::string(token.status().message()));
  }
  return token->token();
}

absl::Status RouteWatcher::ListAll() {
  std::vector<instancepb::Instance> all;
  int64_t revision = -1;
  instancepb::ListInstancesRequest req;
  req.set_page_size(500);
  do {
    absl::StatusOr<instancepb::ListInstancesResponse> listed =
        instances_.ListInstances(req, client::CallContext().set_cancellation(cancel_));
    if (!listed.ok()) {
      return listed.status();
    }
    instancepb::ListInstancesResponse& page = *listed;
    // Pages are read at different revisions: watching from the earliest replays changes,
    // which upserts apply idempotently, and misses none.
    revision = revision < 0 ? page.revision() : std::min(revision, page.revision());
    for (instancepb::Instance& i : *page.mutable_instances()) {
      all.push_back(std::move(i));
    }
    req.set_page_token(page.next_page_token());
  } while (!req.page_token().empty());
  absl::flat_hash_map<std::string, std::string> proxy_tokens;
  for (const instancepb::Instance& i : all) {
    absl::StatusOr<std::string> token = ProxyTokenFor(i, false);
    if (!token.ok()) {
      return token.status();
    }
    proxy_tokens[i.instance_id()] = *std::move(token);
  }
  routes_.Replace(all, proxy_tokens);
  revision_ = std::max<int64_t>(revision, 0);
  Logger("proxy")->info("listed {} instances at revision {}", all.size(), revision_);
  return absl::OkStatus();
}

absl::Status RouteWatcher::WatchOnce() {
  if (stop_.stopped()) {
    return absl::CancelledError("stopped");
  }
  instancepb::WatchInstancesRequest req;
  req.set_since_revision(revision_);
  bool refresh = false;
  absl::Status token_status;
  const absl::Status status = instances_.WatchInstances(
      req,
      [&](const instancepb::InstanceChange& change) {
        std::string proxy_token;
        if (change.type() == instancepb::InstanceChange::TYPE_UPSERTED) {
          absl::StatusOr<std::string> token = ProxyTokenFor(change.instance(), true);
          if (!token.ok()) {
            token_status = token.status();
            return false;  // again from this change's revision
          }
          proxy_token = *std::move(token);
        }
        routes_.Apply(change, proxy_token);
        revision_ = std::max(revision_, change.revision());
        if (change.type() == instancepb::InstanceChange::TYPE_SYNCED) {
          Logger("proxy")->debug("routes synced at revision {} ({} routed)", change.revision(),
                                 routes_.size());
        }
        // Reopen with a fresh token before this one expires.
        refresh = instances_.TokenRefreshDue();
        return !refresh;
      },
      client::CallContext().set_cancellation(cancel_));
  if (!token_status.ok()) {
    return token_status;
  }
  if (refresh) {
    return absl::OkStatus();
  }
  return status.ok() ? absl::UnavailableError("watch ended") : status;
}

void RouteWatcher::Run() {
  auto log = Logger("proxy");
  Backoff backoff({.initial = absl::Milliseconds(100), .max = absl::Seconds(5), .jitter = 0});
  while (!stop_.stopped()) {
    absl::Status s = WatchOnce();
    if (s.ok()) {
      backoff.Reset();
      continue;
    }
    if (s.code() == absl::StatusCode::kOutOfRange) {
      s = ListAll();
      if (s.ok()) {
        continue;
      }
    }
    const absl::Duration wait = backoff.Next();
    log->warn("watching instances: {}; again in {}", s.ToString(), absl::FormatDuration(wait));
    if (stop_.WaitFor(wait)) {
      return;
    }
  }
}

}  // namespace gpuaas::proxy
