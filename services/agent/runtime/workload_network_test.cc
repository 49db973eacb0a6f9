// Workload networks with real pasta, namespaces and nftables: a declared port reaches the
// workload from the node and nothing else does; egress reaches an outside unless denied; no raw
// sockets inside; a second Create keeps a live network and revives a dead pasta; Destroy leaves
// no process, mount or file; PrepareNodeNetwork leaves other tables alone. The attacks from
// inside (the node, other workloads) are in tests/security/network_attack_test.cc.
#include "services/agent/runtime/workload_network.h"

#include <gtest/gtest.h>
#include <linux/if.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "libs/testing/eventually.h"
#include "libs/testing/status_matchers.h"
#include "libs/testing/temp_dir.h"
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

pid_t PastaPid(const std::string& dir) { return std::atoi(ReadAll(dir + "/pasta.pid").c_str()); }

// Running: a zombie is not (it is nobody's child here; init reaps it when it gets to it).
bool Alive(pid_t pid) {
  if (pid <= 0) return false;
  const std::string status = ReadAll(absl::StrCat("/proc/", pid, "/status"));
  return !status.empty() && status.find("State:\tZ") == std::string::npos;
}

class WorkloadNetworkTest : public ::testing::TestWithParam<NetworkKind> {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "network namespaces and nftables need root";
    options_.kind = GetParam();
    ASSERT_OK(PrepareNodeNetwork(options_));
  }
  void TearDown() override {
    for (const auto& dir : dirs_) EXPECT_OK(DestroyWorkloadNetwork(dir->path()));
  }
  std::string NewDir() {
    dirs_.push_back(std::make_unique<gpuaas::testing::TempDir>());
    return dirs_.back()->path();
  }

  NetworkOptions options_;
  std::vector<std::unique_ptr<gpuaas::testing::TempDir>> dirs_;
};

TEST_P(WorkloadNetworkTest, ADeclaredPortReachesTheWorkloadFromTheNodeAndNoOtherPortDoes) {
  const std::string dir = NewDir();
  const int host_port = FreePort();
  const auto started = std::chrono::steady_clock::now();
  ASSERT_OK(CreateWorkloadNetwork(options_, dir, {{host_port, 8080}}, false));
  const auto took = std::chrono::steady_clock::now() - started;
  RecordProperty(
      "create_ms",
      std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(took).count()));
  EXPECT_LT(took, std::chrono::seconds(1)) << "a workload's start budget is 1 s";

  // Both families: pasta carries IPv6 to the workload as IPv6 (a workload listening on IPv4
  // only is reached over the node's IPv4 addresses, as the proxy does).
  ASSERT_OK_AND_ASSIGN(Listener declared, Listener::Open(NetnsPath(dir), "::", 8080));
  ASSERT_OK_AND_ASSIGN(Listener undeclared, Listener::Open(NetnsPath(dir), "::", 9090));
  // The node's loopback and its other IPv4 addresses. Not its other IPv6 ones: pasta gives the
  // namespace the node's addresses, and maps the node's IPv4 address to the gateway when it is
  // the source, but not its IPv6 one, so the namespace drops those as its own.
  // The veth kind is IPv4 only (Linux cannot DNAT ::1 to another address).
  std::vector<std::string> node_addresses = {"127.0.0.1"};
  if (GetParam() == NetworkKind::kPasta) node_addresses.push_back("::1");
  for (const std::string& a : testing::NodeAddresses()) {
    if (a != "127.0.0.1" && a.find(':') == std::string::npos) node_addresses.push_back(a);
  }
  for (const std::string& address : node_addresses) {
    absl::Status accepted;
    EXPECT_THAT(ConnectAndRead(address, host_port, kWaitMs,
                               [&] { accepted = declared.AcceptAndReply("hi", kWaitMs); }),
                gpuaas::testing::IsOkAndHolds("hi"))
        << address;
    EXPECT_OK(accepted) << address;
    EXPECT_NE(ConnectWithin(address, 9090, kWaitMs), Reach::kConnected) << address;
  }
}

TEST_P(WorkloadNetworkTest, EgressReachesTheOutsideUnlessDenied) {
  ASSERT_OK_AND_ASSIGN(testing::Outside outside, testing::Outside::Make());
  ASSERT_OK_AND_ASSIGN(Listener server, Listener::Open(outside.netns(), outside.address(), 0));
  const std::string open_dir = NewDir(), closed_dir = NewDir();
  const int closed_host_port = FreePort();
  ASSERT_OK(CreateWorkloadNetwork(options_, open_dir, {}, false));
  ASSERT_OK(CreateWorkloadNetwork(options_, closed_dir, {{closed_host_port, 8080}}, true));

  auto connect_outside = [&](int wait_ms) {
    return [&, wait_ms] {
      return ReachName(ConnectWithin(outside.address(), server.port(), wait_ms));
    };
  };
  // A first SYN on links just made is sometimes lost and sent again 1 s later.
  EXPECT_THAT(RunAsWorkload(NetnsPath(open_dir), kWorkloadUid, connect_outside(kWaitMs * 2)),
              gpuaas::testing::IsOkAndHolds("connected"));
  // Refused on the node; the workload sees a timeout (pasta 2023-03's reset of a connection it
  // could not open lacks the ACK a SYN_SENT socket needs, so the workload's kernel ignores it).
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

TEST_P(WorkloadNetworkTest, AWorkloadHasNoRawSocketsNorPowerOverItsInterfaces) {
  const std::string dir = NewDir();
  ASSERT_OK(CreateWorkloadNetwork(options_, dir, {}, false));
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

TEST_P(WorkloadNetworkTest, CreateAgainKeepsALiveNetworkAndRevivesADeadPasta) {
  if (GetParam() != NetworkKind::kPasta) GTEST_SKIP() << "pasta's own";
  const std::string dir = NewDir();
  const int host_port = FreePort();
  ASSERT_OK(CreateWorkloadNetwork(options_, dir, {{host_port, 8080}}, false));
  const pid_t first = PastaPid(dir);
  ASSERT_TRUE(Alive(first));
  ASSERT_OK(CreateWorkloadNetwork(options_, dir, {{host_port, 8080}}, false));
  EXPECT_EQ(PastaPid(dir), first);

  ASSERT_EQ(kill(first, SIGKILL), 0);
  ASSERT_TRUE(gpuaas::testing::Eventually([&] { return !Alive(first); }, absl::Seconds(5)));
  ASSERT_OK(CreateWorkloadNetwork(options_, dir, {{host_port, 8080}}, false));
  EXPECT_NE(PastaPid(dir), first);
  EXPECT_TRUE(Alive(PastaPid(dir)));
  ASSERT_OK_AND_ASSIGN(Listener inside, Listener::Open(NetnsPath(dir), "0.0.0.0", 8080));
  absl::Status accepted;
  EXPECT_THAT(ConnectAndRead("127.0.0.1", host_port, kWaitMs,
                             [&] { accepted = inside.AcceptAndReply("again", kWaitMs); }),
              gpuaas::testing::IsOkAndHolds("again"));
}

// After a node reboot the directory still holds the files, no longer mounted, and a pasta.pid
// naming nothing (or, worse, someone else: here the test itself).
TEST_P(WorkloadNetworkTest, CreateAfterARebootMakesItAgainAndSignalsNoStranger) {
  if (GetParam() != NetworkKind::kPasta) GTEST_SKIP() << "pasta's own";
  const std::string dir = NewDir();
  const int host_port = FreePort();
  ASSERT_OK(CreateWorkloadNetwork(options_, dir, {{host_port, 8080}}, false));
  const pid_t pasta = PastaPid(dir);
  ASSERT_EQ(kill(pasta, SIGKILL), 0);
  ASSERT_TRUE(gpuaas::testing::Eventually([&] { return !Alive(pasta); }, absl::Seconds(5)));
  ASSERT_OK(testing::Shell(absl::StrCat("umount ", dir, "/netns ", dir, "/userns")));
  std::ofstream(dir + "/pasta.pid") << getpid() << "\n";

  ASSERT_OK(CreateWorkloadNetwork(options_, dir, {{host_port, 8080}}, false));
  EXPECT_NE(PastaPid(dir), getpid());
  ASSERT_OK_AND_ASSIGN(Listener inside, Listener::Open(NetnsPath(dir), "0.0.0.0", 8080));
  absl::Status accepted;
  EXPECT_THAT(ConnectAndRead("127.0.0.1", host_port, kWaitMs,
                             [&] { accepted = inside.AcceptAndReply("back", kWaitMs); }),
              gpuaas::testing::IsOkAndHolds("back"));
}

TEST_P(WorkloadNetworkTest, DestroyLeavesNoProcessMountNorFileAndTheTableStays) {
  const std::string dir = NewDir();
  ASSERT_OK(CreateWorkloadNetwork(options_, dir, {{FreePort(), 8080}}, true));
  const pid_t pasta = PastaPid(dir);
  ASSERT_EQ(Alive(pasta), GetParam() == NetworkKind::kPasta);
  ASSERT_NE(ReadAll("/proc/self/mountinfo").find(NetnsPath(dir)), std::string::npos);

  ASSERT_OK(DestroyWorkloadNetwork(dir));
  EXPECT_FALSE(Alive(pasta));
  EXPECT_EQ(ReadAll("/proc/self/mountinfo").find(dir + "/"), std::string::npos);
  EXPECT_TRUE(fs::is_empty(dir));
  EXPECT_OK(DestroyWorkloadNetwork(dir));  // again: nothing to do
  EXPECT_OK(testing::Shell(
      absl::StrCat(options_.nft_path, " list table inet gpuaas_workload_network >/dev/null")));
}

TEST_P(WorkloadNetworkTest, PrepareIsIdempotentAndLeavesOtherTablesAlone) {
  const std::string other = absl::StrCat("gpuaas_test_other_", getpid());
  ASSERT_OK(testing::Shell(absl::StrCat(options_.nft_path, " add table inet ", other)));
  EXPECT_OK(PrepareNodeNetwork(options_));
  EXPECT_OK(PrepareNodeNetwork(options_));
  EXPECT_OK(
      testing::Shell(absl::StrCat(options_.nft_path, " list table inet ", other, " >/dev/null && ",
                                  options_.nft_path, " delete table inet ", other)));
  NetworkOptions same = options_;
  same.no_egress_uid = same.egress_uid;
  EXPECT_THAT(PrepareNodeNetwork(same),
              gpuaas::testing::StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST_P(WorkloadNetworkTest, BadPortsAndATakenHostPortAreClearErrorsLeavingNothing) {
  const std::string dir = NewDir();
  EXPECT_THAT(CreateWorkloadNetwork(options_, dir, {{0, 8080}}, false),
              gpuaas::testing::StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(CreateWorkloadNetwork(options_, dir, {{8080, 70000}}, false),
              gpuaas::testing::StatusIs(absl::StatusCode::kInvalidArgument));
  ASSERT_OK_AND_ASSIGN(Listener taken, Listener::Open("", "0.0.0.0", 0));
  EXPECT_THAT(CreateWorkloadNetwork(options_, dir, {{taken.port(), 8080}}, false),
              gpuaas::testing::StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_TRUE(fs::is_empty(dir));
}

INSTANTIATE_TEST_SUITE_P(Kinds, WorkloadNetworkTest,
                         ::testing::Values(NetworkKind::kPasta, NetworkKind::kVeth),
                         [](const auto& info) {
                           return info.param == NetworkKind::kPasta ? "pasta" : "veth";
                         });

}  // namespace
}  // namespace gpuaas::agent
