// Attacks from inside a workload's own network (services/agent/runtime/workload_network.h), as a
// container's process: an unprivileged uid in a user namespace of its own, in the workload's
// network namespace. It tries the node (its loopback, where the database, the services, the
// agent, S3 and the proxy's internal ports listen; its other addresses; the gateway address,
// which pasta's default once mapped to the node's loopback) and another workload (its host
// port, on every address), over TCP and UDP. Each fails; the node still reaches both workloads
// through their declared ports, and the workload still reaches an outside. The networks are made
// with the library directly; container_attack_test runs attacks from real containers.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "libs/common/held_port.h"
#include "libs/testing/ci_skip.h"
#include "libs/testing/status_matchers.h"
#include "libs/testing/temp_dir.h"
#include "services/agent/runtime/testing/network_probe.h"
#include "services/agent/runtime/workload_network.h"

namespace gpuaas::agent {
namespace {

using testing::ConnectAndRead;
using testing::ConnectWithin;
using testing::FreePort;
using testing::Listener;
using testing::Reach;
using testing::ReachName;
using testing::RunAsWorkload;

constexpr uid_t kAttackerUid = 199501;
constexpr int kWaitMs = 1000;

// Inside the workload: its default gateway (IPv4) from its own routing table.
std::string GatewayInside() {
  std::ifstream routes("/proc/self/net/route");
  std::string line;
  while (std::getline(routes, line)) {
    std::vector<std::string> f = absl::StrSplit(line, '\t', absl::SkipWhitespace());
    if (f.size() < 3 || f[1] != "00000000") continue;
    in_addr gw{static_cast<in_addr_t>(std::stoul(f[2], nullptr, 16))};
    char text[INET_ADDRSTRLEN];
    return inet_ntop(AF_INET, &gw, text, sizeof text);
  }
  return "";
}

// A UDP datagram from inside to `address`:`port`; the node's socket there must not get it.
bool UdpArrives(const std::string& netns, const std::string& address) {
  const bool v6 = address.find(':') != std::string::npos;
  const int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_storage addr{};
  socklen_t len = v6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  if (v6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&addr);
    a->sin6_family = AF_INET6;
    inet_pton(AF_INET6, address.c_str(), &a->sin6_addr);
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&addr);
    a->sin_family = AF_INET;
    inet_pton(AF_INET, address.c_str(), &a->sin_addr);
  }
  bind(fd, reinterpret_cast<sockaddr*>(&addr), len);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);  // now with its port
  RunAsWorkload(netns, kAttackerUid, [&] {
    const int s = socket(v6 ? AF_INET6 : AF_INET, SOCK_DGRAM, 0);
    for (int i = 0; i < 3; ++i) sendto(s, "x", 1, 0, reinterpret_cast<sockaddr*>(&addr), len);
    return std::string();
  }).IgnoreError();
  pollfd p{fd, POLLIN, 0};
  const bool arrived = poll(&p, 1, kWaitMs / 2) > 0;
  close(fd);
  return arrived;
}

class NetworkAttackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GPUAAS_SKIP_OR_FAIL_IN_CI() << "network namespaces and nftables need root";
    ASSERT_OK(PrepareNodeNetwork());
    ASSERT_OK_AND_ASSIGN(auto outside, testing::Outside::Make());
    outside_ = std::make_unique<testing::Outside>(std::move(outside));
    victim_host_port_ = FreePort();
    ASSERT_OK(CreateWorkloadNetwork(attacker_.path(), {{FreePort(), 8080}}, false));
    ASSERT_OK(CreateWorkloadNetwork(victim_.path(), {{victim_host_port_, 8080}}, false));
    // Held, as the agent holds a workload's: an agent starting beside this test keeps it.
    victim_port_held_ = HoldTcpPort(victim_host_port_);
  }
  void TearDown() override {
    EXPECT_OK(DestroyWorkloadNetwork(attacker_.path()));
    EXPECT_OK(DestroyWorkloadNetwork(victim_.path()));
  }

  // The node's addresses an attacker would try: loopback, every interface's, the outside link's.
  std::vector<std::string> NodeAddresses() const {
    std::vector<std::string> addresses = testing::NodeAddresses();
    addresses.push_back("127.0.0.2");  // the rest of 127/8 is the node's too
    addresses.push_back(outside_->node_address());
    return addresses;
  }
  std::string AttackerNetns() const { return NetnsPath(attacker_.path()); }

  gpuaas::testing::TempDir attacker_, victim_;
  std::unique_ptr<testing::Outside> outside_;
  int victim_host_port_ = 0;
  UniqueFd victim_port_held_;
};

// The database, the services, the agent, S3 and the proxy's internal ports all listen on the
// node: on loopback or on its addresses. A listener on each stands for them.
TEST_F(NetworkAttackTest, AWorkloadCannotConnectToTheNodesLoopbackOrAddresses) {
  std::vector<std::pair<std::string, Listener>> services;
  for (const std::string& address : NodeAddresses()) {
    ASSERT_OK_AND_ASSIGN(Listener l, Listener::Open("", address, 0));
    // The legitimate path: the node itself reaches each.
    ASSERT_EQ(ConnectWithin(address, l.port(), kWaitMs), Reach::kConnected) << address;
    services.emplace_back(address, std::move(l));
  }
  ASSERT_OK_AND_ASSIGN(std::string results, RunAsWorkload(AttackerNetns(), kAttackerUid, [&] {
                         std::string out;
                         for (const auto& [address, l] : services) {
                           absl::StrAppend(&out, address, "=",
                                           ReachName(ConnectWithin(address, l.port(), kWaitMs)),
                                           " ");
                         }
                         return out;
                       }));
  EXPECT_EQ(results.find("=connected"), std::string::npos) << results;
}

// pasta's default maps the gateway address to the node's loopback; the node's end of a link
// must not lead there either.
TEST_F(NetworkAttackTest, AWorkloadCannotReachTheNodesLoopbackThroughTheGatewayAddress) {
  ASSERT_OK_AND_ASSIGN(Listener service, Listener::Open("", "127.0.0.1", 0));
  ASSERT_OK_AND_ASSIGN(std::string result, RunAsWorkload(AttackerNetns(), kAttackerUid, [&] {
                         const std::string gateway = GatewayInside();
                         return gateway + "=" +
                                ReachName(ConnectWithin(gateway, service.port(), kWaitMs));
                       }));
  EXPECT_EQ(result.find("=connected"), std::string::npos) << result;
  EXPECT_NE(result.find('.'), std::string::npos) << "no gateway inside: " << result;
}

TEST_F(NetworkAttackTest, AWorkloadCannotReachAnotherWorkloadsPortOnAnyAddress) {
  ASSERT_OK_AND_ASSIGN(Listener victim, Listener::Open(NetnsPath(victim_.path()), "::", 8080));
  const std::vector<std::string> node_addresses = NodeAddresses();  // the node's, not inside's
  // The victim's own addresses, as it sees them: its server listens there on 8080.
  ASSERT_OK_AND_ASSIGN(std::string victim_addresses,
                       RunAsWorkload(NetnsPath(victim_.path()), kAttackerUid,
                                     [] { return absl::StrJoin(testing::NodeAddresses(), " "); }));
  ASSERT_OK_AND_ASSIGN(
      std::string results, RunAsWorkload(AttackerNetns(), kAttackerUid, [&] {
        std::string out;
        std::vector<std::string> targets = node_addresses;
        targets.push_back(GatewayInside());
        for (const std::string& address : targets) {
          absl::StrAppend(&out, address, "=",
                          ReachName(ConnectWithin(address, victim_host_port_, kWaitMs)), " ");
        }
        for (absl::string_view address : absl::StrSplit(victim_addresses, ' ', absl::SkipEmpty())) {
          absl::StrAppend(&out, "victim:", address, "=",
                          ReachName(ConnectWithin(std::string(address), 8080, kWaitMs)), " ");
        }
        return out;
      }));
  EXPECT_EQ(results.find("=connected"), std::string::npos) << results;

  // The legitimate path: the node (the proxy) reaches the victim through its host port.
  absl::Status accepted;
  EXPECT_THAT(ConnectAndRead("127.0.0.1", victim_host_port_, kWaitMs * 2,
                             [&] { accepted = victim.AcceptAndReply("victim", kWaitMs * 2); }),
              gpuaas::testing::IsOkAndHolds("victim"));
  EXPECT_OK(accepted);
}

TEST_F(NetworkAttackTest, AWorkloadsUdpNeverArrivesAtTheNode) {
  for (const std::string& address : NodeAddresses()) {
    EXPECT_FALSE(UdpArrives(AttackerNetns(), address)) << address;
  }
}

// With egress, a workload tries a host on the node's LAN (a private address: other nodes,
// internal services) and a cloud's metadata service (link-local, the node's credentials). The
// node reaches both, so what refuses the workload is veth_forward's rule (a reset, not a lost
// packet); a network the operator allows (--workload-lan-allow) it reaches, and the rest still
// not.
TEST_F(NetworkAttackTest, AWorkloadReachesNeitherTheLanNorCloudMetadata) {
  ASSERT_OK_AND_ASSIGN(testing::Outside lan, testing::Outside::Make(testing::OutsideRange::kLan));
  ASSERT_OK_AND_ASSIGN(testing::Outside metadata,
                       testing::Outside::Make(testing::OutsideRange::kLinkLocal));
  ASSERT_OK_AND_ASSIGN(Listener lan_server, Listener::Open(lan.netns(), lan.address(), 0));
  ASSERT_OK_AND_ASSIGN(Listener metadata_server,
                       Listener::Open(metadata.netns(), metadata.address(), 0));
  ASSERT_EQ(ConnectWithin(lan.address(), lan_server.port(), kWaitMs), Reach::kConnected);
  ASSERT_EQ(ConnectWithin(metadata.address(), metadata_server.port(), kWaitMs), Reach::kConnected);
  auto reach = [&](const testing::Outside& host, const Listener& server) {
    return RunAsWorkload(AttackerNetns(), kAttackerUid, [&] {
      return ReachName(ConnectWithin(host.address(), server.port(), kWaitMs * 3));
    });
  };
  EXPECT_THAT(reach(lan, lan_server), gpuaas::testing::IsOkAndHolds("refused"));
  EXPECT_THAT(reach(metadata, metadata_server), gpuaas::testing::IsOkAndHolds("refused"));

  // An agent starting beside this test refills the node's table with its own (empty) list: try
  // again then.
  absl::StatusOr<std::string> allowed;
  for (int attempt = 0; attempt < 3 && !(allowed.ok() && *allowed == "connected"); ++attempt) {
    ASSERT_OK(PrepareNodeNetwork({lan.network()}));
    allowed = reach(lan, lan_server);
  }
  EXPECT_THAT(allowed, gpuaas::testing::IsOkAndHolds("connected"));
  EXPECT_THAT(reach(metadata, metadata_server), gpuaas::testing::IsOkAndHolds("refused"));
  EXPECT_OK(PrepareNodeNetwork());
}

// A machine on the node's network (an Outside, behind its own link) tries a workload's host
// ports without the proxy: at the node's address on that link, and at the node's other
// addresses. Ports are forwarded only at the address the proxy uses (the agent's
// --advertise-address), and a private port only from the proxies' sources (--proxy-source):
// the machine reaches a public port there, and nothing else. The proxy (the node, from the
// advertised address) still reaches the private one.
TEST_F(NetworkAttackTest, APrivatePortAnswersOnlyTheProxyAtTheAdvertisedAddress) {
  ASSERT_OK_AND_ASSIGN(testing::Outside lan, testing::Outside::Make());
  // The machine routes everything through the node, so it can try the node's other addresses.
  ASSERT_OK(testing::Shell(absl::StrCat("ip -n ", lan.netns().substr(lan.netns().rfind('/') + 1),
                                        " route add default via ", lan.node_address())));
  gpuaas::testing::TempDir exposed, local;
  const int private_port = FreePort(), public_port = FreePort(), local_port = FreePort();
  // Advertised at the link's address, the proxy on the node (so connecting from it).
  ASSERT_OK(CreateWorkloadNetwork(exposed.path(), {{private_port, 8080}, {public_port, 9090}},
                                  false,
                                  {.address = lan.node_address(),
                                   .proxy_sources = {lan.node_address()},
                                   .public_host_ports = {public_port}}));
  // Advertised at loopback (the dev stack's agents): private, nothing for the outside.
  ASSERT_OK(CreateWorkloadNetwork(local.path(), {{local_port, 8080}}, false));
  // Held after, as the agent holds a workload's: an agent starting beside this test keeps them.
  std::vector<UniqueFd> held;
  for (int port : {private_port, public_port, local_port}) held.push_back(HoldTcpPort(port));
  ASSERT_OK_AND_ASSIGN(Listener private_server,
                       Listener::Open(NetnsPath(exposed.path()), "0.0.0.0", 8080));
  ASSERT_OK_AND_ASSIGN(Listener public_server,
                       Listener::Open(NetnsPath(exposed.path()), "0.0.0.0", 9090));
  ASSERT_OK_AND_ASSIGN(Listener local_server,
                       Listener::Open(NetnsPath(local.path()), "0.0.0.0", 8080));

  std::vector<std::string> other_addresses;
  for (const std::string& a : testing::NodeAddresses()) {
    if (a != lan.node_address() && a.find(':') == std::string::npos && !a.starts_with("127.")) {
      other_addresses.push_back(a);
    }
  }
  ASSERT_OK_AND_ASSIGN(std::string results, RunAsWorkload(lan.netns(), kAttackerUid, [&] {
                         std::string out;
                         auto attempt = [&](const std::string& name, const std::string& address,
                                            int port) {
                           absl::StrAppend(&out, name, "@", address, "=",
                                           ReachName(ConnectWithin(address, port, kWaitMs)), " ");
                         };
                         attempt("private", lan.node_address(), private_port);
                         attempt("loopback-advertised", lan.node_address(), local_port);
                         for (const std::string& address : other_addresses) {
                           attempt("private", address, private_port);
                           attempt("public", address, public_port);
                           attempt("loopback-advertised", address, local_port);
                         }
                         return out;
                       }));
  EXPECT_EQ(results.find("=connected"), std::string::npos) << results;

  // The legitimate paths: the public port from the machine, at the advertised address ...
  EXPECT_THAT(
      RunAsWorkload(lan.netns(), kAttackerUid,
                    [&] {
                      absl::StatusOr<std::string> read =
                          ConnectAndRead(lan.node_address(), public_port, kWaitMs * 2, [&] {
                            public_server.AcceptAndReply("public", kWaitMs * 2).IgnoreError();
                          });
                      return read.ok() ? *read : read.status().ToString();
                    }),
      gpuaas::testing::IsOkAndHolds("public"));
  // ... and the private ones from the proxy: the node, from the advertised address.
  for (auto [address, port, server] :
       {std::tuple{lan.node_address(), private_port, &private_server},
        std::tuple{std::string("127.0.0.1"), local_port, &local_server}}) {
    absl::Status accepted;
    EXPECT_THAT(ConnectAndRead(address, port, kWaitMs * 2,
                               [&] { accepted = server->AcceptAndReply("proxy", kWaitMs * 2); }),
                gpuaas::testing::IsOkAndHolds("proxy"))
        << address;
    EXPECT_OK(accepted) << address;
  }
  EXPECT_OK(DestroyWorkloadNetwork(exposed.path()));
  EXPECT_OK(DestroyWorkloadNetwork(local.path()));
}

// The network works: what the attacks above were refused is not everything.
TEST_F(NetworkAttackTest, TheSameWorkloadStillReachesTheOutside) {
  ASSERT_OK_AND_ASSIGN(Listener server, Listener::Open(outside_->netns(), outside_->address(), 0));
  EXPECT_THAT(RunAsWorkload(AttackerNetns(), kAttackerUid,
                            [&] {
                              return ReachName(
                                  ConnectWithin(outside_->address(), server.port(), kWaitMs * 3));
                            }),
              gpuaas::testing::IsOkAndHolds("connected"));
}

}  // namespace
}  // namespace gpuaas::agent
