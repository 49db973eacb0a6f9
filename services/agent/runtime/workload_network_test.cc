// Workload networks with real namespaces, veth links and nftables: a declared port reaches the
// workload from the node and nothing else does; egress reaches an outside unless denied; no raw
// sockets inside; a second Create keeps a live network and makes again one a reboot took;
// Destroy leaves no link, mount or file; only forwards nobody holds are dropped;
// PrepareNodeNetwork leaves other tables alone. The attacks
// from inside (the node, other workloads) are in tests/security/network_attack_test.cc.
#include "services/agent/runtime/workload_network.h"

#include <gtest/gtest.h>
#include <linux/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "libs/common/held_port.h"
#include "libs/testing/ci_skip.h"
#include "libs/testing/eventually.h"
#include "libs/testing/status_matchers.h"
#include "libs/testing/temp_dir.h"
#include "services/agent/runtime/internal/node_rules.h"
#include "services/agent/runtime/testing/network_probe.h"

namespace gpuaas::agent {
namespace {

namespace fs = std::filesystem;
using testing::ConnectAndRead;
using testing::ConnectWithin;
using testing::FreePort;
using testing::Listener;
using testing::Reach;
using testing::ReachName;
using testing::RunAsWorkload;

constexpr uid_t kWorkloadUid = 199500;  // the container's processes: no one of the node
constexpr int kWaitMs = 2000;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The workload's link on the node (gpw<slot>), from the first line of its veth state file.
std::string HostLink(const std::string& dir) {
  return absl::StrCat("gpw", std::atoi(ReadAll(dir + "/veth").c_str()));
}

bool LinkExists(const std::string& name) { return fs::exists("/sys/class/net/" + name); }

class WorkloadNetworkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GPUAAS_SKIP_OR_FAIL_IN_CI() << "network namespaces and nftables need root";
    ASSERT_OK(PrepareNodeNetwork());
  }
  void TearDown() override {
    for (const auto& dir : dirs_) EXPECT_OK(DestroyWorkloadNetwork(dir->path()));
  }
  std::string NewDir() {
    dirs_.push_back(std::make_unique<gpuaas::testing::TempDir>());
    return dirs_.back()->path();
  }

  std::vector<std::unique_ptr<gpuaas::testing::TempDir>> dirs_;
};

// A declared port is forwarded at the advertised address (loopback by default, as the dev
// stack's agents advertise) and nowhere else: not at the node's other addresses, and no other
// port of the workload.
TEST_F(WorkloadNetworkTest, ADeclaredPortReachesTheWorkloadFromTheNodeAndNoOtherPortDoes) {
  const std::string dir = NewDir();
  const int host_port = FreePort();
  const auto started = std::chrono::steady_clock::now();
  ASSERT_OK(CreateWorkloadNetwork(dir, {{host_port, 8080}}, false));
  const auto took = std::chrono::steady_clock::now() - started;
  // Held, as the agent holds a workload's host ports: an agent starting beside this test
  // (DropUnheldForwards) leaves the forward alone.
  const UniqueFd held = HoldTcpPort(host_port);
  RecordProperty(
      "create_ms",
      std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(took).count()));
  EXPECT_LT(took, std::chrono::seconds(1)) << "a workload's start budget is 1 s";

  // The workload listens on both families; the node reaches it over IPv4 (Linux cannot DNAT
  // ::1 to another address), as the proxy does.
  ASSERT_OK_AND_ASSIGN(Listener declared, Listener::Open(NetnsPath(dir), "::", 8080));
  ASSERT_OK_AND_ASSIGN(Listener undeclared, Listener::Open(NetnsPath(dir), "::", 9090));
  absl::Status accepted;
  EXPECT_THAT(ConnectAndRead("127.0.0.1", host_port, kWaitMs,
                             [&] { accepted = declared.AcceptAndReply("hi", kWaitMs); }),
              gpuaas::testing::IsOkAndHolds("hi"));
  EXPECT_OK(accepted);
  EXPECT_NE(ConnectWithin("127.0.0.1", 9090, kWaitMs), Reach::kConnected);
  // The node's other IPv4 addresses are not where the proxy connects.
  for (const std::string& address : testing::NodeAddresses()) {
    if (address == "127.0.0.1" || address.find(':') != std::string::npos) continue;
    EXPECT_NE(ConnectWithin(address, host_port, kWaitMs), Reach::kConnected) << address;
    EXPECT_NE(ConnectWithin(address, 9090, kWaitMs), Reach::kConnected) << address;
  }
}

TEST_F(WorkloadNetworkTest, EgressReachesTheOutsideUnlessDenied) {
  ASSERT_OK_AND_ASSIGN(testing::Outside outside, testing::Outside::Make());
  ASSERT_OK_AND_ASSIGN(Listener server, Listener::Open(outside.netns(), outside.address(), 0));
  const std::string open_dir = NewDir(), closed_dir = NewDir();
  const int closed_host_port = FreePort();
  ASSERT_OK(CreateWorkloadNetwork(open_dir, {}, false));
  ASSERT_OK(CreateWorkloadNetwork(closed_dir, {{closed_host_port, 8080}}, true));
  const UniqueFd held = HoldTcpPort(closed_host_port);

  auto connect_outside = [&](int wait_ms) {
    return [&, wait_ms] {
      return ReachName(ConnectWithin(outside.address(), server.port(), wait_ms));
    };
  };
  // A first SYN on links just made is sometimes lost and sent again 1 s later.
  EXPECT_THAT(RunAsWorkload(NetnsPath(open_dir), kWorkloadUid, connect_outside(kWaitMs * 2)),
              gpuaas::testing::IsOkAndHolds("connected"));
  // Refused on the node (veth_forward resets it).
  EXPECT_THAT(RunAsWorkload(NetnsPath(closed_dir), kWorkloadUid, connect_outside(kWaitMs / 2)),
              gpuaas::testing::IsOkAndHolds(::testing::Not("connected")));

  // Denied egress leaves the way in: its declared port still serves the node.
  ASSERT_OK_AND_ASSIGN(Listener inside, Listener::Open(NetnsPath(closed_dir), "0.0.0.0", 8080));
  absl::Status accepted;
  EXPECT_THAT(ConnectAndRead("127.0.0.1", closed_host_port, kWaitMs,
                             [&] { accepted = inside.AcceptAndReply("in", kWaitMs); }),
              gpuaas::testing::IsOkAndHolds("in"));
  EXPECT_OK(accepted);
}

TEST_F(WorkloadNetworkTest, AWorkloadHasNoRawSocketsNorPowerOverItsInterfaces) {
  const std::string dir = NewDir();
  ASSERT_OK(CreateWorkloadNetwork(dir, {}, false));
  auto attempts = [] {
    std::string result;
    auto note = [&](const char* what, bool refused) {
      absl::StrAppend(&result, what, refused && errno == EPERM ? ":EPERM " : ":ALLOWED ");
    };
    note("raw4", socket(AF_INET, SOCK_RAW, IPPROTO_ICMP) < 0);
    note("raw6", socket(AF_INET6, SOCK_RAW, IPPROTO_ICMPV6) < 0);
    note("packet", socket(AF_PACKET, SOCK_RAW, 0) < 0);
    ifreq down{};
    std::strncpy(down.ifr_name, "lo", IFNAMSIZ);
    const int fd = socket(AF_INET, SOCK_DGRAM, 0);
    note("ifdown", ioctl(fd, SIOCSIFFLAGS, &down) != 0);
    // An ordinary socket still works: the workload serves on its ports.
    sockaddr_in any{};
    any.sin_family = AF_INET;
    const int tcp = socket(AF_INET, SOCK_STREAM, 0);
    absl::StrAppend(&result, "tcp:", tcp >= 0 && bind(tcp, (sockaddr*)&any, sizeof any) == 0);
    return result;
  };
  EXPECT_THAT(
      RunAsWorkload(NetnsPath(dir), kWorkloadUid, attempts),
      gpuaas::testing::IsOkAndHolds("raw4:EPERM raw6:EPERM packet:EPERM ifdown:EPERM tcp:1"));
}

TEST_F(WorkloadNetworkTest, CreateAgainKeepsALiveNetwork) {
  const std::string dir = NewDir();
  ASSERT_OK(CreateWorkloadNetwork(dir, {{FreePort(), 8080}}, false));
  const std::string state = ReadAll(dir + "/veth");
  // An agent restart adopting its workloads: the same link, ports and policy, nothing remade
  // (not even with other arguments).
  ASSERT_OK(CreateWorkloadNetwork(dir, {{FreePort(), 9090}}, true));
  EXPECT_EQ(ReadAll(dir + "/veth"), state);
  EXPECT_TRUE(LinkExists(HostLink(dir)));
}

// After a node reboot the directory still holds the files, no longer mounted, and the link is
// gone: Create makes the network again and the declared port serves.
TEST_F(WorkloadNetworkTest, CreateAfterARebootMakesItAgain) {
  const std::string dir = NewDir();
  const int host_port = FreePort();
  ASSERT_OK(CreateWorkloadNetwork(dir, {{host_port, 8080}}, false));
  const std::string link = HostLink(dir);
  ASSERT_OK(testing::Shell(absl::StrCat("ip link del ", link, " && umount ", NetnsPath(dir))));

  ASSERT_OK(CreateWorkloadNetwork(dir, {{host_port, 8080}}, false));
  const UniqueFd held = HoldTcpPort(host_port);
  EXPECT_TRUE(LinkExists(HostLink(dir)));
  ASSERT_OK_AND_ASSIGN(Listener inside, Listener::Open(NetnsPath(dir), "0.0.0.0", 8080));
  absl::Status accepted;
  EXPECT_THAT(ConnectAndRead("127.0.0.1", host_port, kWaitMs,
                             [&] { accepted = inside.AcceptAndReply("back", kWaitMs); }),
              gpuaas::testing::IsOkAndHolds("back"));
  EXPECT_OK(accepted);
}

TEST_F(WorkloadNetworkTest, DestroyLeavesNoLinkMountNorFileAndTheTableStays) {
  const std::string dir = NewDir();
  const int host_port = FreePort();
  ASSERT_OK(CreateWorkloadNetwork(dir, {{host_port, 8080}}, true));
  const std::string link = HostLink(dir);
  ASSERT_TRUE(LinkExists(link));
  ASSERT_NE(ReadAll("/proc/self/mountinfo").find(NetnsPath(dir)), std::string::npos);

  ASSERT_OK(DestroyWorkloadNetwork(dir));
  EXPECT_FALSE(LinkExists(link));
  EXPECT_NE(testing::Shell(absl::StrCat("nft get element inet gpuaas_workload_network veth_ports "
                                        "'{ ",
                                        host_port, " }' 2>/dev/null")),
            absl::OkStatus())
      << "the forward of " << host_port << " is gone";
  EXPECT_EQ(ReadAll("/proc/self/mountinfo").find(dir + "/"), std::string::npos);
  EXPECT_TRUE(fs::is_empty(dir));
  EXPECT_OK(DestroyWorkloadNetwork(dir));  // again: nothing to do
  EXPECT_OK(
      testing::Shell(absl::StrCat("nft", " list table inet gpuaas_workload_network >/dev/null")));
}

// An agent killed with its workloads' shims leaves their forwards: at its next start the
// forwards nobody holds go, so a program binding one of those ports later gets its own clients.
TEST_F(WorkloadNetworkTest, DropUnheldForwardsKeepsOnlyTheHeldOnes) {
  const std::string live = NewDir(), gone = NewDir();
  const int live_port = FreePort(), gone_port = FreePort();
  ASSERT_OK(CreateWorkloadNetwork(live, {{live_port, 8080}}, false));
  ASSERT_OK(CreateWorkloadNetwork(gone, {{gone_port, 8080}}, false));
  const UniqueFd held = HoldTcpPort(live_port);
  auto forwarded = [](int port) {
    return testing::Shell(absl::StrCat("nft get element inet gpuaas_workload_network "
                                       "veth_private_ports '{ 127.0.0.1 . 127.0.0.1 . ",
                                       port, " }' >/dev/null 2>&1"))
        .ok();
  };
  ASSERT_TRUE(forwarded(live_port));
  ASSERT_TRUE(forwarded(gone_port));

  DropUnheldForwards();
  EXPECT_TRUE(forwarded(live_port));
  EXPECT_FALSE(forwarded(gone_port));
  // A program of the node now binds the port and gets its own clients.
  ASSERT_OK_AND_ASSIGN(Listener mine, Listener::Open("", "0.0.0.0", gone_port));
  absl::Status accepted;
  EXPECT_THAT(ConnectAndRead("127.0.0.1", gone_port, kWaitMs,
                             [&] { accepted = mine.AcceptAndReply("mine", kWaitMs); }),
              gpuaas::testing::IsOkAndHolds("mine"));
  EXPECT_OK(accepted);
}

TEST_F(WorkloadNetworkTest, PrepareIsIdempotentAndLeavesOtherTablesAlone) {
  const std::string other = absl::StrCat("gpuaas_test_other_", getpid());
  ASSERT_OK(testing::Shell(absl::StrCat("nft", " add table inet ", other)));
  EXPECT_OK(PrepareNodeNetwork());
  EXPECT_OK(PrepareNodeNetwork());
  EXPECT_OK(testing::Shell(absl::StrCat("nft", " list table inet ", other, " >/dev/null && ", "nft",
                                        " delete table inet ", other)));
}

// The allowed networks go into an nft script: only what parses as one gets there.
TEST_F(WorkloadNetworkTest, ABadAllowedLanNetworkIsAClearError) {
  for (const std::string bad : {"10.0.0.0/33", "10.1.2.3/8", "mirror.internal",
                                "10.0.0.0/8 }; "
                                "flush ruleset; add element inet t s { 1.2.3.4"}) {
    EXPECT_THAT(PrepareNodeNetwork({bad}),
                gpuaas::testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                          ::testing::HasSubstr("lan_allowed")))
        << bad;
  }
  EXPECT_OK(PrepareNodeNetwork({"10.1.0.0/16", "10.1.2.0/24", "192.168.7.5"}));
  EXPECT_OK(PrepareNodeNetwork());
}

TEST_F(WorkloadNetworkTest, BadPortsAndATakenHostPortAreClearErrorsLeavingNothing) {
  const std::string dir = NewDir();
  EXPECT_THAT(CreateWorkloadNetwork(dir, {{0, 8080}}, false),
              gpuaas::testing::StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(CreateWorkloadNetwork(dir, {{8080, 70000}}, false),
              gpuaas::testing::StatusIs(absl::StatusCode::kInvalidArgument));
  ASSERT_OK_AND_ASSIGN(Listener taken, Listener::Open("", "0.0.0.0", 0));
  EXPECT_THAT(CreateWorkloadNetwork(dir, {{taken.port(), 8080}}, false),
              gpuaas::testing::StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_TRUE(fs::is_empty(dir));
}

}  // namespace
}  // namespace gpuaas::agent

// The node's resolvers (usually on the LAN) keep answering workloads' DNS; nothing else of
// them is reachable. An image-less workload reads the node's resolv.conf, so without this its
// every name lookup waits on a refused LAN address.
namespace gpuaas::agent {
namespace {

TEST(NodeRulesTest, TheNodesResolversTakeDnsAndNothingElseOfTheLan) {
  using network_internal::Ipv4Nameservers;
  EXPECT_EQ(Ipv4Nameservers("# comment\nnameserver 10.255.255.53\nnameserver ::1\n"
                            "nameserver\tnot-an-address\nsearch example\nnameserver 192.168.1.1"),
            (std::vector<std::string>{"10.255.255.53", "192.168.1.1"}));
  const std::string rules = network_internal::NodeRules({}, {"10.255.255.53"});
  EXPECT_NE(rules.find("veth_dns { 10.255.255.53 }"), std::string::npos) << rules;
  const size_t dns = rules.find("@veth_dns meta l4proto { tcp, udp } th dport 53 accept");
  const size_t lan = rules.find("ip daddr @veth_lan ip daddr != @veth_lan_allowed");
  ASSERT_NE(dns, std::string::npos) << rules;
  ASSERT_NE(lan, std::string::npos) << rules;
  EXPECT_LT(dns, lan) << "DNS is let through before the LAN is refused";
  // Workloads without egress get no DNS either: their refusal comes first.
  EXPECT_LT(rules.find("iifname @veth_no_egress"), dns);
}

}  // namespace
}  // namespace gpuaas::agent
