// Test helpers for workload networks: a process inside a workload's network namespace as a
// container's would be (an unprivileged uid in a user namespace of its own), TCP listeners and
// bounded connects, and an "outside" (a network namespace behind a veth, with a route) to stand
// for the internet this machine does not have. Root only.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace gpuaas::agent::testing {

// What a connect came to.
enum class Reach { kConnected, kRefused, kTimedOut, kOtherError };
std::string ReachName(Reach reach);

// A TCP connect to `address` (IPv4 or IPv6 literal) and `port`, waiting at most `timeout_ms`.
// The socket is closed again.
Reach ConnectWithin(const std::string& address, int port, int timeout_ms);

// Runs `probe` in a forked child that joins the network namespace at `netns`, becomes uid and
// gid `uid`, then makes a user namespace of its own (root there, with no capability over the
// network namespace: the way runc puts a container in it). Returns what `probe` returned.
// The calling process must be single-threaded (it forks and runs C++ in the child).
absl::StatusOr<std::string> RunAsWorkload(const std::string& netns, uid_t uid,
                                          const std::function<std::string()>& probe);

// A listening TCP socket made inside the network namespace at `netns` ("" = the caller's) on
// `address`:`port` (port 0: a free one). Closed at destruction.
class Listener final {
 public:
  static absl::StatusOr<Listener> Open(const std::string& netns, const std::string& address,
                                       int port);
  Listener(Listener&& other) noexcept : fd_(other.fd_), port_(other.port_) { other.fd_ = -1; }
  Listener& operator=(Listener&&) = delete;
  ~Listener();
  int port() const { return port_; }
  // Accepts one connection within `timeout_ms`, reads the client's first bytes, writes `reply`
  // and closes it.
  absl::Status AcceptAndReply(const std::string& reply, int timeout_ms);

 private:
  Listener(int fd, int port) : fd_(fd), port_(port) {}
  int fd_;
  int port_;
};

// Connects to `address`:`port`, sends a few bytes and reads what the peer writes before
// closing, within `timeout_ms`; `before_read` runs once sent (e.g. to make the peer accept).
absl::StatusOr<std::string> ConnectAndRead(const std::string& address, int port, int timeout_ms,
                                           const std::function<void()>& before_read = {});

// A port free on the node now (bound to port 0, closed again).
int FreePort();

// The node's own addresses (every interface, loopback included, no IPv6 link-local ones), but
// those of workloads' links (gpw*) and of Outsides (gpo*), which other tests make and remove.
std::vector<std::string> NodeAddresses();

// Where an Outside's /30 is: the internet (198.18.0.0/15, benchmarking, never routed), a
// host on the node's LAN (10.224.0.0/15) or a link-local one (169.254.0.0/16, a cloud's
// metadata service).
enum class OutsideRange { kInternet, kLan, kLinkLocal };

// A stand-in for a host beyond the node: a network namespace joined to the node by a veth pair,
// each end with an address of a /30 of `range` chosen by the test's pid (up to 8 per process).
class Outside final {
 public:
  static absl::StatusOr<Outside> Make(OutsideRange range = OutsideRange::kInternet);
  Outside(Outside&& other) noexcept;
  Outside& operator=(Outside&&) = delete;
  ~Outside();
  // The namespace's path (for Listener::Open) and its address as the node sees it; its /30.
  std::string netns() const { return "/run/netns/" + name_; }
  const std::string& address() const { return address_; }
  std::string network() const;
  // The node's end of the link: one of the node's addresses.
  const std::string& node_address() const { return node_address_; }

 private:
  Outside(std::string name, std::string link, std::string address, std::string node_address)
      : name_(std::move(name)),
        link_(std::move(link)),
        address_(std::move(address)),
        node_address_(std::move(node_address)) {}
  std::string name_;
  std::string link_;  // the node's end
  std::string address_;
  std::string node_address_;
};

// `command` through /bin/sh; its exit status must be 0.
absl::Status Shell(const std::string& command);

}  // namespace gpuaas::agent::testing
