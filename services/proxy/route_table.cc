#include "services/proxy/route_table.h"

namespace gpuaas::proxy {

namespace instancepb = ::gpuaas::instance::v1;

RouteTable::Ports RouteTable::RoutesOf(const instancepb::Instance& instance,
                                       const std::string& proxy_token) {
  Ports ports;
  if (instance.state() != instancepb::STATE_READY &&
      instance.state() != instancepb::STATE_RUNNING) {
    return ports;
  }
  for (const instancepb::Port& p : instance.template_().ports()) {
    if (p.protocol() == instancepb::PROTOCOL_TCP) {
      continue;  // the proxy speaks HTTP only
    }
    for (const instancepb::PortMapping& m : instance.ports()) {
      if (m.port() != p.port() || m.host_port() <= 0 || m.host().empty()) {
        continue;
      }
      ports.push_back({.tenant_id = instance.tenant_id(),
                       .port = p.port(),
                       .is_public = p.is_public(),
                       .base_url = p.base_url().empty() ? "/" : p.base_url(),
                       .host = m.host(),
                       .host_port = m.host_port(),
                       .proxy_token = proxy_token});
      break;
    }
  }
  return ports;
}

bool RouteTable::Routes(const instancepb::Instance& instance) {
  return !RoutesOf(instance, "").empty();
}

std::string RouteTable::ProxyTokenOf(const std::string& instance_id) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = routes_.find(instance_id);
  return it == routes_.end() ? "" : it->second.front().proxy_token;
}

void RouteTable::Put(const instancepb::Instance& instance, const std::string& proxy_token) {
  Ports ports = RoutesOf(instance, proxy_token);
  if (ports.empty()) {
    routes_.erase(instance.instance_id());
  } else {
    routes_[instance.instance_id()] = std::move(ports);
  }
}

std::optional<PortRoute> RouteTable::Find(const std::string& instance_id, int32_t port) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = routes_.find(instance_id);
  if (it == routes_.end()) {
    return std::nullopt;
  }
  for (const PortRoute& r : it->second) {
    if (r.port == port) {
      return r;
    }
  }
  return std::nullopt;
}

void RouteTable::Apply(const instancepb::InstanceChange& change, const std::string& proxy_token) {
  absl::MutexLock lock(&mu_);
  switch (change.type()) {
    case instancepb::InstanceChange::TYPE_UPSERTED:
      Put(change.instance(), proxy_token);
      break;
    case instancepb::InstanceChange::TYPE_DELETED:
      routes_.erase(change.instance().instance_id());
      break;
    case instancepb::InstanceChange::TYPE_SYNCED:
      synced_ = true;
      break;
    default:
      break;
  }
}

void RouteTable::Replace(const std::vector<instancepb::Instance>& instances,
                         const absl::flat_hash_map<std::string, std::string>& proxy_tokens) {
  absl::MutexLock lock(&mu_);
  routes_.clear();
  for (const instancepb::Instance& i : instances) {
    auto token = proxy_tokens.find(i.instance_id());
    Put(i, token == proxy_tokens.end() ? "" : token->second);
  }
}

bool RouteTable::synced() const {
  absl::ReaderMutexLock lock(&mu_);
  return synced_;
}

void RouteTable::MarkSynced() {
  absl::MutexLock lock(&mu_);
  synced_ = true;
}

size_t RouteTable::size() const {
  absl::ReaderMutexLock lock(&mu_);
  return routes_.size();
}

}  // namespace gpuaas::proxy
