// The runtime's containers with real runc and real processes, from a busybox layer made on the
// spot (the registry and the image store have tests of their own): a container runs as its
// user namespace's root, which is nobody on the node, sees its storage, and ends as it should;
// its memory, pids, disk and open-files limits hold and a memory hog is OOM_KILLED while its
// neighbour runs on; what it may not do (mount, unshare, ptrace, raw sockets, the node's files)
// fails; a new runtime adopts a running container; once it ends, nothing of it stays mounted.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "libs/testing/ci_skip.h"
#include "libs/testing/eventually.h"
#include "libs/testing/temp_dir.h"
#include "services/agent/runtime/container_rootfs.h"
#include "services/agent/runtime/probe.h"
#include "services/agent/runtime/process_runtime.h"
#include "services/agent/runtime/workload_network.h"
#include "tests/agent/runtime_waits.h"

namespace gpuaas::agent {
namespace {

namespace fs = std::filesystem;
namespace pb = ::gpuaas::instance::v1;
using gpuaas::testing::Eventually;

std::string Read(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// One layer: busybox and its applets, owned by root as an image's files are.
class BusyboxImage final : public ContainerImages {
 public:
  explicit BusyboxImage(fs::path layer) : layer_(std::move(layer)) {
    fs::create_directories(layer_ / "bin");
    fs::create_directories(layer_ / "etc");
    fs::create_directories(layer_ / "root");
    chmod((layer_ / "root").c_str(), 0700);
    fs::copy_file("/bin/busybox", layer_ / "bin" / "busybox");
    for (const char* applet :
         {"sh",      "cat",     "echo", "id",    "sleep", "dd",     "head", "tr", "ls",   "mount",
          "unshare", "nsenter", "ping", "touch", "wc",    "ulimit", "grep", "df", "kill", "true"}) {
      fs::create_symlink("busybox", layer_ / "bin" / applet);
    }
    std::ofstream(layer_ / "etc" / "passwd") << "root:x:0:0:root:/root:/bin/sh\n";
    std::ofstream(layer_ / "etc" / "secret") << "image file\n";
  }
  absl::StatusOr<ContainerImage> Pull(
      const pb::Workload& w, const std::function<void(const std::string&)>& progress) override {
    if (w.image_reference() == "missing") return absl::NotFoundError("image not found: missing");
    progress("1 of 1 layers");
    return ContainerImage{.digest = "sha256:busybox",
                          .layer_dirs = {layer_.string()},
                          .process = {.env = {"IMAGE_VAR=from-image"}, .cmd = {"sh"}}};
  }

 private:
  fs::path layer_;
};

// The node's veth networks (workload_network.h), as the agent wires them.
class VethNetworks final : public ContainerNetworks {
 public:
  absl::StatusOr<std::string> Create(const std::string& dir, const std::map<int, int>& ports,
                                     const std::set<int>& public_host_ports,
                                     bool deny_egress) override {
    PortAccess access;
    access.public_host_ports = public_host_ports;
    if (absl::Status s = CreateWorkloadNetwork(dir, ports, deny_egress, access); !s.ok()) {
      return s;
    }
    return NetnsPath(dir);
  }
  absl::Status Destroy(const std::string& dir) override { return DestroyWorkloadNetwork(dir); }
};

class ContainerRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GPUAAS_SKIP_OR_FAIL_IN_CI() << "containers need root";
    // Traversable, as the agent's directory is: runc binds the root file system as the
    // container's root.
    chmod(dir_.path().c_str(), 0711);
    image_ = std::make_shared<BusyboxImage>(dir_.path() / "layer");
    root_ = dir_.path() / "workloads";
    runtime_ = New();
  }
  void TearDown() override {
    if (runtime_ == nullptr) return;
    for (const auto& s : runtime_->List()) (void)runtime_->Stop(s.workload_id());
    Eventually(
        [&] {
          for (const auto& s : runtime_->List()) {
            if (s.state() != pb::WORKLOAD_STATE_STOPPED && s.state() != pb::WORKLOAD_STATE_EXITED &&
                s.state() != pb::WORKLOAD_STATE_FAILED) {
              return false;
            }
          }
          return true;
        },
        absl::Seconds(20));
    for (const auto& s : runtime_->List()) EXPECT_TRUE(runtime_->Remove(s.workload_id()).ok());
    runtime_.reset();
    // Nothing of any container stays mounted, and the shared layer is whole.
    EXPECT_EQ(Read("/proc/self/mountinfo").find(root_.string()), std::string::npos);
    EXPECT_TRUE(fs::exists(dir_.path() / "layer" / "bin" / "busybox"));
  }

  std::unique_ptr<Runtime> New() {
    ProcessRuntimeOptions o;
    o.root = root_.string();
    o.shim_path = GPUAAS_SHIM_BINARY;
    o.log_limit_bytes = 1 << 20;
    o.containers.images = image_;
    o.containers.system_image_workloads = true;
    if (with_network_) {
      auto networks = std::make_shared<VethNetworks>();
      EXPECT_TRUE(PrepareNodeNetwork().ok());
      o.containers.networks = networks;
      o.first_port = 39000 + getpid() % 100 * 10;
      o.last_port = o.first_port + 9;
    }
    // Ids apart from other tests' (and from the process runtime's).
    o.containers.first_id = 3u << 24;
    o.containers.id_blocks = 16;
    absl::StatusOr<std::unique_ptr<Runtime>> r = NewProcessRuntime(o);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *std::move(r) : nullptr;
  }

  pb::Workload Workload(const std::string& id, const std::string& cmd) {
    pb::Workload w;
    w.set_workload_id(id);
    w.set_instance_id(id.substr(0, id.find('.')));
    w.set_tenant_id("tenant-a");
    w.set_image_reference("registry.test/busybox@sha256:busybox");
    w.set_cmd(cmd);
    w.mutable_stop_grace_period()->set_seconds(1);
    return w;
  }

  std::optional<pb::WorkloadStatus> Status(const std::string& id) {
    return testing::WorkloadStatusOf(*runtime_, id);
  }
  bool WaitState(const std::string& id, pb::WorkloadState state,
                 absl::Duration timeout = absl::Seconds(30)) {
    return testing::WaitWorkloadState(*runtime_, id, state, timeout);
  }
  // Runs `cmd` in a container to its end; its stdout.
  std::string RunToExit(pb::Workload w) {
    EXPECT_TRUE(runtime_->Start(w).ok());
    EXPECT_TRUE(WaitState(w.workload_id(), pb::WORKLOAD_STATE_EXITED))
        << Status(w.workload_id())->DebugString() << Read(root_ / w.workload_id() / "stderr.log");
    return Read(root_ / w.workload_id() / "stdout.log");
  }

  bool with_network_ = false;
  gpuaas::testing::TempDir dir_;
  std::shared_ptr<BusyboxImage> image_;
  fs::path root_;
  std::unique_ptr<Runtime> runtime_;
};

TEST_F(ContainerRuntimeTest, RunsAsItsNamespacesRootWhichIsNobodyOnTheNode) {
  const std::string out =
      RunToExit(Workload("who.1",
                         "id -u; cat /proc/self/uid_map; echo $IMAGE_VAR $GPUAAS_INSTANCE_ID; "
                         "cat /etc/secret; echo written > /root/note && cat /root/note; hostname"));
  EXPECT_NE(out.find("0\n"), std::string::npos) << out;
  EXPECT_NE(out.find("0   50331648      65536"), std::string::npos) << out;
  EXPECT_NE(out.find("from-image who"), std::string::npos) << out;
  EXPECT_NE(out.find("image file"), std::string::npos) << out;
  EXPECT_NE(out.find("written"), std::string::npos) << out;
}

TEST_F(ContainerRuntimeTest, AWorkloadWithoutAnImageRunsFromTheNodesSystem) {
  pb::Workload w = Workload("system.1",
                            "python3 -c 'print(\"python\", 6*7)'; id -u; "
                            "touch /usr/gpuaas-container-test && echo USR-OWN-LAYER; "
                            "cat /etc/shadow >/dev/null 2>&1 && echo SHADOW; "
                            "echo note > /tmp/n && cat /tmp/n");
  w.clear_image_reference();
  const std::string out = RunToExit(w);
  EXPECT_NE(out.find("python 42\n0\n"), std::string::npos) << out;
  EXPECT_NE(out.find("note"), std::string::npos) << out;
  // What it writes to /usr stays in its own layer, never the node's.
  EXPECT_NE(out.find("USR-OWN-LAYER"), std::string::npos) << out;
  EXPECT_FALSE(fs::exists("/usr/gpuaas-container-test"));
  EXPECT_EQ(out.find("SHADOW"), std::string::npos) << out;
}

TEST_F(ContainerRuntimeTest, ServesOnItsOwnPortThroughItsHostPortOnly) {
  with_network_ = true;
  runtime_ = New();
  pb::Workload w = Workload("web.1",
                            "mkdir -p /www && echo hello > /www/index.html && "
                            "exec httpd -f -p 8080 -h /www");
  pb::Port* port = w.add_ports();
  port->set_port(8080);
  port->set_is_probe(true);
  ASSERT_TRUE(runtime_->Start(w).ok());
  ASSERT_TRUE(WaitState("web.1", pb::WORKLOAD_STATE_RUNNING, absl::Seconds(20)))
      << Status("web.1")->DebugString() << Read(root_ / "web.1" / "stderr.log");
  const int host_port = Status("web.1")->ports(0).host_port();
  EXPECT_TRUE(ProbeHttp("127.0.0.1", host_port, "/", absl::Seconds(2)));
}

TEST_F(ContainerRuntimeTest, ReportsPullingThenRunsAndStops) {
  ASSERT_TRUE(runtime_->Start(Workload("loop.1", "while true; do sleep 1; done")).ok());
  ASSERT_TRUE(WaitState("loop.1", pb::WORKLOAD_STATE_RUNNING));
  ASSERT_TRUE(runtime_->Stop("loop.1").ok());
  ASSERT_TRUE(WaitState("loop.1", pb::WORKLOAD_STATE_STOPPED));
}

TEST_F(ContainerRuntimeTest, AMissingImageIsImagePullFailed) {
  pb::Workload w = Workload("gone.1", "true");
  w.set_image_reference("missing");
  ASSERT_TRUE(runtime_->Start(w).ok());
  ASSERT_TRUE(WaitState("gone.1", pb::WORKLOAD_STATE_FAILED));
  EXPECT_EQ(Status("gone.1")->reason(), pb::REASON_IMAGE_PULL_FAILED);
  EXPECT_NE(Status("gone.1")->message().find("not found"), std::string::npos);
}

TEST_F(ContainerRuntimeTest, AMemoryHogIsOomKilledAndItsNeighbourRunsOn) {
  ASSERT_TRUE(runtime_->Start(Workload("calm.1", "while true; do sleep 1; done")).ok());
  pb::Workload hog =
      Workload("hog.1", "a=$(head -c 300000000 /dev/zero | tr '\\0' x); echo survived");
  hog.mutable_limits()->set_memory_bytes(64 << 20);
  ASSERT_TRUE(runtime_->Start(hog).ok());
  ASSERT_TRUE(WaitState("hog.1", pb::WORKLOAD_STATE_FAILED));
  EXPECT_EQ(Status("hog.1")->reason(), pb::REASON_OOM_KILLED) << Status("hog.1")->DebugString();
  EXPECT_EQ(Read(root_ / "hog.1" / "stdout.log").find("survived"), std::string::npos);
  EXPECT_EQ(Status("calm.1")->state(), pb::WORKLOAD_STATE_RUNNING);
}

TEST_F(ContainerRuntimeTest, AForkBombStopsAtThePidsLimit) {
  pb::Workload w =
      Workload("bomb.1",
               "i=0; while [ $i -lt 200 ]; do sleep 30 & i=$((i+1)); done 2>/dev/null; "
               "ls /proc | grep -c '^[0-9]'");
  w.mutable_limits()->set_pids(50);
  const std::string out = RunToExit(w);
  EXPECT_LE(std::atoi(out.c_str()), 50) << out;
}

TEST_F(ContainerRuntimeTest, FillingTheDiskStopsAtItsLimit) {
  pb::Workload w = Workload("fill.1",
                            "dd if=/dev/zero of=/tmp/big bs=1M count=64 2>/dev/null; "
                            "echo tmp $(( $(wc -c < /tmp/big) >> 20 )); "
                            "dd if=/dev/zero of=/big bs=1M count=64 2>/dev/null; echo done");
  w.mutable_limits()->set_ephemeral_disk_bytes(32 << 20);
  const std::string out = RunToExit(w);
  int mib = 0;
  ASSERT_EQ(std::sscanf(out.c_str(), "tmp %d", &mib), 1) << out;
  EXPECT_LT(mib, 32) << out;
}

TEST_F(ContainerRuntimeTest, OpenFilesStopAtTheirLimit) {
  pb::Workload w = Workload("files.1", "ulimit -n");
  w.mutable_limits()->set_open_files(1234);
  EXPECT_EQ(RunToExit(w), "1234\n");
}

TEST_F(ContainerRuntimeTest, PrivilegedOperationsAreRefused) {
  const std::string out =
      RunToExit(Workload("evil.1",
                         "mount -t tmpfs none /mnt 2>/dev/null && echo MOUNTED; "
                         "unshare -U true 2>/dev/null && echo UNSHARED; "
                         "unshare -n true 2>/dev/null && echo NETNS; "
                         "ping -c1 127.0.0.1 >/dev/null 2>&1 && echo RAW; "
                         "echo 1 > /proc/sys/kernel/sysrq 2>/dev/null && echo SYSCTL; "
                         "cat /proc/kcore >/dev/null 2>&1 && echo KCORE; "
                         "echo end"));
  for (const char* got : {"MOUNTED", "UNSHARED", "NETNS", "RAW", "SYSCTL"}) {
    EXPECT_EQ(out.find(got), std::string::npos) << got << " in " << out;
  }
  EXPECT_NE(out.find("end"), std::string::npos) << out;
}

TEST_F(ContainerRuntimeTest, ANewRuntimeAdoptsARunningContainer) {
  ASSERT_TRUE(runtime_->Start(Workload("keep.1", "while true; do sleep 1; done")).ok());
  ASSERT_TRUE(WaitState("keep.1", pb::WORKLOAD_STATE_RUNNING));
  runtime_.reset();
  runtime_ = New();
  ASSERT_TRUE(WaitState("keep.1", pb::WORKLOAD_STATE_RUNNING));
  ASSERT_TRUE(runtime_->Stop("keep.1").ok());
  ASSERT_TRUE(WaitState("keep.1", pb::WORKLOAD_STATE_STOPPED));
  EXPECT_FALSE(IsMountPoint((root_ / "keep.1" / "rootfs").string()));
}

}  // namespace
}  // namespace gpuaas::agent
