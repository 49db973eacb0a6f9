// The process runtime with real bubblewrap sandboxes and real processes: a workload serves on
// its host port and turns RUNNING; exits, probe timeouts and SIGTERM-deaf workloads end as they
// should; the sandbox keeps a workload out of other workloads' storage, the agent's files and
// the database's, shows it only its own processes, and never runs it as root; a tenant's
// workloads share a writable storage no other tenant's reads; a new runtime adopts what an old
// one started; logs stay under their cap.
#include "services/agent/runtime/process_runtime.h"

#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

#include "libs/common/files.h"
#include "libs/testing/ci_skip.h"
#include "libs/testing/eventually.h"
#include "libs/testing/temp_dir.h"
#include "services/agent/runtime/probe.h"
#include "services/agent/runtime/shim_files.h"
#include "tests/agent/runtime_waits.h"

namespace gpuaas::agent {
namespace {

namespace fs = std::filesystem;
namespace pb = ::gpuaas::instance::v1;
using gpuaas::testing::Eventually;

// "" when unreadable: a process may exit while its /proc files are read.
std::string Read(const fs::path& p) { return ReadFile(p.string()).value_or(""); }

class ProcessRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Traversable but not listable by others, as the dev stack keeps it (bwrap binds as the
    // workload's user).
    private_ = dir_.path() / "private";
    fs::create_directories(private_);
    chmod(dir_.path().c_str(), 0711);
    chmod(private_.c_str(), 0711);
    root_ = private_ / "workloads";
    runtime_ = New();
  }
  void TearDown() override {
    if (runtime_) {
      for (const auto& s : runtime_->List()) (void)runtime_->Stop(s.workload_id());
      Eventually(
          [&] {
            for (const auto& s : runtime_->List()) {
              if (s.state() == pb::WORKLOAD_STATE_STARTED ||
                  s.state() == pb::WORKLOAD_STATE_RUNNING) {
                return false;
              }
            }
            return true;
          },
          absl::Seconds(20));
    }
  }

  // `first_uid`-`last_uid`: each workload's own uid; 0: all as nobody. `first_gid`-`last_gid`:
  // each tenant's group; 0: each workload's uid's.
  std::unique_ptr<Runtime> New(uid_t first_uid = 0, uid_t last_uid = 0, gid_t first_gid = 0,
                               gid_t last_gid = 0) {
    ProcessRuntimeOptions o;
    o.first_uid = first_uid;
    o.last_uid = last_uid;
    o.first_gid = first_gid;
    o.last_gid = last_gid;
    o.root = root_.string();
    o.shim_path = GPUAAS_SHIM_BINARY;
    o.log_limit_bytes = 1 << 20;
    o.gpu_minor = {{"GPU-test-0", 0}};
    absl::StatusOr<std::unique_ptr<Runtime>> r = NewProcessRuntime(o);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *std::move(r) : nullptr;
  }

  pb::Workload Workload(const std::string& id, const std::string& cmd) {
    pb::Workload w;
    w.set_workload_id(id);
    w.set_instance_id(id.substr(0, id.find('.')));
    w.set_cmd(cmd);
    w.add_gpu_uuids("GPU-test-0");
    w.mutable_stop_grace_period()->set_seconds(1);
    return w;
  }
  // A storage directory on the host, mounted at `at`.
  fs::path Mount(pb::Workload& w, const std::string& name, const std::string& at, bool ro) {
    const fs::path host = private_ / "storage" / name;
    fs::create_directories(host);
    pb::Mount* m = w.add_mounts();
    m->set_host_path(host.string());
    m->set_mount_path(at);
    m->set_read_only(ro);
    return host;
  }

  std::optional<pb::WorkloadStatus> Status(const std::string& id) {
    return testing::WorkloadStatusOf(*runtime_, id);
  }
  bool WaitState(const std::string& id, pb::WorkloadState state,
                 absl::Duration timeout = absl::Seconds(20)) {
    return testing::WaitWorkloadState(*runtime_, id, state, timeout);
  }

  gpuaas::testing::TempDir dir_;
  fs::path private_;
  fs::path root_;
  std::unique_ptr<Runtime> runtime_;
};

TEST_F(ProcessRuntimeTest, ServesOnItsHostPortWithItsEnvironmentAndTurnsRunning) {
  pb::Workload w = Workload("web.1",
                            "echo \"$GREETING $GPUAAS_INSTANCE_ID $CUDA_VISIBLE_DEVICES\" > "
                            "/data/env.txt && cd /data && exec python3 -m http.server "
                            "\"$GPUAAS_PORT_8080\" --bind 127.0.0.1");
  pb::Env* env = w.add_envs();
  env->set_name("GREETING");
  env->set_value("hello");
  pb::Port* port = w.add_ports();
  port->set_port(8080);
  port->set_is_probe(true);
  port->set_base_url("/env.txt");
  const fs::path data = Mount(w, "web", "/data", false);
  ASSERT_TRUE(runtime_->Start(w).ok());
  ASSERT_TRUE(WaitState("web.1", pb::WORKLOAD_STATE_RUNNING)) << Read(root_ / "web.1/stderr.log");
  const pb::WorkloadStatus s = *Status("web.1");
  ASSERT_EQ(s.ports_size(), 1);
  EXPECT_EQ(s.ports(0).port(), 8080);
  EXPECT_TRUE(ProbeHttp("127.0.0.1", s.ports(0).host_port(), "/env.txt", absl::Seconds(2)));
  EXPECT_EQ(Read(data / "env.txt"), "hello web GPU-test-0\n");
  // Start again is a no-op.
  EXPECT_TRUE(runtime_->Start(w).ok());
  EXPECT_EQ(runtime_->List().size(), 1u);
}

TEST_F(ProcessRuntimeTest, ExitsProbeTimeoutsAndDeafWorkloadsEndAsTheyShould) {
  ASSERT_TRUE(runtime_->Start(Workload("crash.1", "echo bye >&2; exit 7")).ok());
  pb::Workload silent = Workload("silent.1", "exec sleep 600");
  pb::Port* port = silent.add_ports();
  port->set_port(9000);
  port->set_protocol(pb::PROTOCOL_TCP);
  port->set_is_probe(true);
  silent.mutable_probe_timeout()->set_seconds(1);
  ASSERT_TRUE(runtime_->Start(silent).ok());
  ASSERT_TRUE(
      runtime_->Start(Workload("deaf.1", "trap '' TERM; while :; do sleep 0.1; done")).ok());

  ASSERT_TRUE(WaitState("crash.1", pb::WORKLOAD_STATE_EXITED));
  EXPECT_EQ(Status("crash.1")->exit_code(), 7);
  EXPECT_EQ(Read(root_ / "crash.1/stderr.log"), "bye\n");

  ASSERT_TRUE(WaitState("silent.1", pb::WORKLOAD_STATE_FAILED));
  EXPECT_EQ(Status("silent.1")->reason(), pb::REASON_PROBE_TIMEOUT);
  EXPECT_TRUE(
      Eventually([&] { return ShimFiles((root_ / "silent.1").string()).ReadExit().has_value(); },
                 absl::Seconds(20)))
      << "a failed probe stops the workload";

  ASSERT_TRUE(WaitState("deaf.1", pb::WORKLOAD_STATE_RUNNING));
  ASSERT_TRUE(runtime_->Stop("deaf.1").ok());
  ASSERT_TRUE(WaitState("deaf.1", pb::WORKLOAD_STATE_STOPPED, absl::Seconds(10)))
      << "SIGKILL after the one-second grace";
  ASSERT_TRUE(runtime_->Remove("deaf.1").ok());
  EXPECT_FALSE(fs::exists(root_ / "deaf.1"));
}

TEST_F(ProcessRuntimeTest, TheSandboxKeepsAWorkloadToItself) {
  // Another workload's storage, the agent's files, and a stand-in for the database's.
  pb::Workload other = Workload("other.1", "exec sleep 600");
  const fs::path other_data = Mount(other, "other", "/data", false);
  std::ofstream(other_data / "secret") << "other's\n";
  ASSERT_TRUE(runtime_->Start(other).ok());
  const fs::path db = private_ / "pgdata";
  fs::create_directories(db);
  std::ofstream(db / "PG_VERSION") << "15\n";

  const std::string probe =
      "out=/data/report; : > $out; "
      "echo uid=$(id -u) >> $out; "
      "cat " +
      (other_data / "secret").string() +
      " >/dev/null 2>&1 && echo other=READ >> $out; "
      "cat " +
      (db / "PG_VERSION").string() +
      " >/dev/null 2>&1 && echo db=READ >> $out; "
      "ls " +
      root_.string() +
      " >/dev/null 2>&1 && echo agent=READ >> $out; "
      "echo procs=$(ls /proc | grep -c '^[0-9]') >> $out; "
      "touch /ro/x 2>/dev/null && echo ro=WRITTEN >> $out; "
      "touch /etc/x 2>/dev/null && echo etc=WRITTEN >> $out; "
      "echo home=$HOME >> $out; touch $HOME/mine && echo home=WRITABLE >> $out; "
      "echo done >> $out";
  pb::Workload w = Workload("nosy.1", probe);
  const fs::path data = Mount(w, "nosy", "/data", false);
  Mount(w, "shared", "/ro", true);
  ASSERT_TRUE(runtime_->Start(w).ok());
  ASSERT_TRUE(WaitState("nosy.1", pb::WORKLOAD_STATE_EXITED)) << Read(root_ / "nosy.1/stderr.log");
  const std::string report = Read(data / "report");
  EXPECT_NE(report.find("done"), std::string::npos) << report << Read(root_ / "nosy.1/stderr.log");
  EXPECT_EQ(report.find("uid=0\n"), std::string::npos) << report;
  EXPECT_EQ(report.find("READ"), std::string::npos) << report;
  EXPECT_EQ(report.find("WRITTEN"), std::string::npos) << report;
  EXPECT_NE(report.find("home=/home/workload\nhome=WRITABLE"), std::string::npos) << report;
  // The sandbox's init, its shell, the subshell, ls and grep: nothing of the host's (hundreds)
  // or the other workload's.
  ASSERT_NE(report.find("procs="), std::string::npos);
  const size_t at = report.find("procs=") + 6;
  EXPECT_LE(std::stoi(report.substr(at)), 6) << report;
}

// A storage is shared by the instances that mount it, so a workload may leave a symlink where
// another instance's sub_path points. The mount must never follow it: not to bind the host
// directory it names, nor (the agent being root) to hand that directory to the workload's user.
TEST_F(ProcessRuntimeTest, ASymlinkPlantedInAStorageNeverRedirectsAMount) {
  const fs::path outside = private_ / "outside";
  fs::create_directories(outside);
  std::ofstream(outside / "secret") << "host's\n";
  struct stat before;
  ASSERT_EQ(stat(outside.c_str(), &before), 0);
  pb::Workload planter = Workload("planter.1", "exec sleep 600");
  const fs::path storage = Mount(planter, "shared-s", "/data", false);
  fs::create_directory_symlink(outside, storage / "evil");
  fs::create_directories(storage / "real");
  fs::create_directory_symlink(outside, storage / "real" / "evil");

  int n = 0;
  for (const char* sub : {"evil", "real/evil", "real/evil/deeper"}) {
    SCOPED_TRACE(sub);
    pb::Workload w = Workload("victim" + std::to_string(++n) + ".1",
                              "cat /data/secret > /tmp/x && echo LEAKED; sleep 600");
    pb::Mount* m = w.add_mounts();
    m->set_host_path(storage.string());
    m->set_sub_path(sub);
    m->set_mount_path("/data");
    const absl::Status started = runtime_->Start(w);
    EXPECT_TRUE(absl::IsFailedPrecondition(started)) << started;
    EXPECT_NE(started.message().find("symlink"), std::string::npos) << started;
    EXPECT_EQ(Status(w.workload_id())->state(), pb::WORKLOAD_STATE_FAILED);
  }
  struct stat after;
  ASSERT_EQ(stat(outside.c_str(), &after), 0);
  EXPECT_EQ(after.st_uid, before.st_uid) << "the symlink's target was handed to the workload";
  EXPECT_FALSE(fs::exists(outside / "deeper"));

  // A sub_path that does not exist yet is made beneath the storage, the workload's to write.
  pb::Workload good = Workload("good.1", "echo mine > /data/out && exec sleep 600");
  pb::Mount* m = good.add_mounts();
  m->set_host_path(storage.string());
  m->set_sub_path("models/sd");
  m->set_mount_path("/data");
  ASSERT_TRUE(runtime_->Start(good).ok());
  // Its content, not only its existence: the file is there before echo writes into it.
  EXPECT_TRUE(Eventually([&] { return Read(storage / "models/sd/out") == "mine\n"; }))
      << Read(root_ / "good.1/stderr.log");
}

TEST_F(ProcessRuntimeTest, AMountTheWorkloadsUserCannotReachFailsTheStartSayingWhy) {
  pb::Workload w = Workload("hidden.1", "exec sleep 600");
  const fs::path locked = private_ / "locked";
  fs::create_directories(locked / "data");
  chmod(locked.c_str(), 0700);
  pb::Mount* m = w.add_mounts();
  m->set_host_path((locked / "data").string());
  m->set_mount_path("/data");
  const absl::Status started = runtime_->Start(w);
  EXPECT_TRUE(absl::IsFailedPrecondition(started)) << started;
  ASSERT_TRUE(Status("hidden.1").has_value());
  EXPECT_EQ(Status("hidden.1")->state(), pb::WORKLOAD_STATE_FAILED);
  EXPECT_EQ(Status("hidden.1")->reason(), pb::REASON_START_ERROR);
  EXPECT_NE(Status("hidden.1")->message().find("cannot enter " + locked.string()),
            std::string::npos)
      << Status("hidden.1")->message();
}

TEST_F(ProcessRuntimeTest, ANewRuntimeAdoptsRunningWorkloadsAndFindsTheirExits) {
  ASSERT_TRUE(runtime_->Start(Workload("long.1", "exec sleep 600")).ok());
  ASSERT_TRUE(runtime_->Start(Workload("short.1", "sleep 1; exit 3")).ok());
  ASSERT_TRUE(WaitState("long.1", pb::WORKLOAD_STATE_RUNNING));
  const std::optional<pid_t> shim = ShimFiles((root_ / "long.1").string()).LiveShim();
  ASSERT_TRUE(shim.has_value());

  runtime_.reset();  // the agent goes away; short.1 exits meanwhile
  absl::SleepFor(absl::Seconds(2));
  runtime_ = New();
  ASSERT_NE(runtime_, nullptr);
  EXPECT_EQ(Status("long.1")->state(), pb::WORKLOAD_STATE_RUNNING);
  EXPECT_EQ(ShimFiles((root_ / "long.1").string()).LiveShim(), shim) << "not started twice";
  ASSERT_TRUE(WaitState("short.1", pb::WORKLOAD_STATE_EXITED));
  EXPECT_EQ(Status("short.1")->exit_code(), 3);
  ASSERT_TRUE(runtime_->Stop("long.1").ok());
  EXPECT_TRUE(WaitState("long.1", pb::WORKLOAD_STATE_STOPPED));
}

// The agent blocks SIGTERM/SIGINT in every thread (service::TerminationSignals); a mask survives
// exec, so the runtime must hand the shim none of it, or the shim never hears its stop.
TEST_F(ProcessRuntimeTest, AWorkloadStartedWithTheAgentsSignalsBlockedStillStops) {
  sigset_t stop_signals, old;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, &old);
  runtime_ = New();
  ASSERT_NE(runtime_, nullptr);
  ASSERT_TRUE(runtime_->Start(Workload("blocked.1", "exec sleep 600")).ok());
  ASSERT_TRUE(WaitState("blocked.1", pb::WORKLOAD_STATE_RUNNING));
  ASSERT_TRUE(runtime_->Stop("blocked.1").ok());
  EXPECT_TRUE(WaitState("blocked.1", pb::WORKLOAD_STATE_STOPPED, absl::Seconds(10)));
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

// The OOM killer or an operator's kill -9 takes the shim: the runtime sees it go (its pidfd, not
// a file it wrote), and the sandbox goes with it, so no process keeps the workload's GPUs.
TEST_F(ProcessRuntimeTest, AShimKilledOutrightTakesItsWorkloadAlongAndIsReported) {
  ASSERT_TRUE(runtime_->Start(Workload("killed.1", "exec sleep 600")).ok());
  ASSERT_TRUE(WaitState("killed.1", pb::WORKLOAD_STATE_RUNNING));
  const std::optional<pid_t> shim = ShimFiles((root_ / "killed.1").string()).LiveShim();
  ASSERT_TRUE(shim.has_value());
  // The shim's child is bwrap, the sandbox's outermost process.
  const std::string children =
      Read(fs::path("/proc") / std::to_string(*shim) / "task" / std::to_string(*shim) / "children");
  const pid_t bwrap = std::atoi(children.c_str());
  ASSERT_GT(bwrap, 0) << "no child under the shim";

  ASSERT_EQ(kill(*shim, SIGKILL), 0);
  ASSERT_TRUE(WaitState("killed.1", pb::WORKLOAD_STATE_EXITED));
  EXPECT_EQ(Status("killed.1")->exit_code(), 137);
  EXPECT_EQ(Status("killed.1")->reason(), pb::REASON_WORKLOAD_EXITED);
  EXPECT_TRUE(Eventually(
      [&] {
        // Gone, or a zombie about to be reaped by init.
        const std::string stat = Read(fs::path("/proc") / std::to_string(bwrap) / "stat");
        return stat.empty() || stat.find(") Z ") != std::string::npos;
      },
      absl::Seconds(10)))
      << "the sandbox outlived its shim";
}

// Each workload runs as a uid of its own from the range, kept across a new runtime's adoption;
// when the range is spent a start fails saying so, and a removed workload's uid is free again.
TEST_F(ProcessRuntimeTest, EachWorkloadRunsAsAUidOfItsOwnUntilItsDirectoryIsRemoved) {
  if (geteuid() != 0) GPUAAS_SKIP_OR_FAIL_IN_CI() << "only a root runtime hands out uids";
  runtime_ = New(300000, 300001);
  ASSERT_NE(runtime_, nullptr);
  const std::string cmd = "id -u > \"$HOME/uid\"; exec sleep 600";
  ASSERT_TRUE(runtime_->Start(Workload("a.1", cmd)).ok());
  ASSERT_TRUE(runtime_->Start(Workload("b.1", cmd)).ok());
  const absl::Status spent = runtime_->Start(Workload("c.1", cmd));
  EXPECT_EQ(spent.code(), absl::StatusCode::kResourceExhausted) << spent;
  EXPECT_NE(spent.message().find("no free workload uid in 300000-300001"), std::string::npos);
  auto uid_of = [&](const std::string& id) {
    std::string uid;
    Eventually([&] { return !(uid = Read(root_ / id / "home" / "uid")).empty(); });
    return uid;
  };
  EXPECT_EQ(uid_of("a.1"), "300000\n");
  EXPECT_EQ(uid_of("b.1"), "300001\n");
  struct stat home;
  ASSERT_EQ(stat((root_ / "a.1" / "home").c_str(), &home), 0);
  EXPECT_EQ(home.st_uid, 300000u);
  EXPECT_EQ(home.st_mode & 0777, 0700u);

  runtime_ = New(300000, 300001);  // the agent restarts: its workloads keep their uids
  ASSERT_TRUE(runtime_->Stop("a.1").ok());
  ASSERT_TRUE(WaitState("a.1", pb::WORKLOAD_STATE_STOPPED));
  ASSERT_TRUE(runtime_->Remove("a.1").ok());
  ASSERT_TRUE(runtime_->Remove("c.1").ok());
  ASSERT_TRUE(runtime_->Start(Workload("d.1", cmd)).ok());
  EXPECT_EQ(uid_of("d.1"), "300000\n") << "a.1's uid, free again; b.1 keeps 300001";
}

// Two workloads of one tenant (each its own uid) mount one storage writable: the later start
// takes nothing from the earlier one, both write each other's files, the S3 data plane's
// included, whatever umask they run with. Another tenant's workload, on the host as its uid and
// gid, reads nothing of the storage.
TEST_F(ProcessRuntimeTest, WorkloadsOfOneTenantShareAStorageThatNoOtherTenantReads) {
  if (geteuid() != 0)
    GPUAAS_SKIP_OR_FAIL_IN_CI() << "only a root runtime hands out uids and groups";
  runtime_ = New(300000, 300009, 310000, 310009);
  ASSERT_NE(runtime_, nullptr);
  const fs::path storage = private_ / "storage" / "shared";
  fs::create_directories(storage / "models");
  std::ofstream(storage / "models" / "seed.txt") << "s3\n";  // as the S3 data plane: root, 0644
  auto of = [&](const std::string& id, const std::string& tenant, const std::string& cmd) {
    pb::Workload w = Workload(id, "echo ids $(id -u) $(id -g); " + cmd + "; exec sleep 600");
    w.set_tenant_id(tenant);
    pb::Mount* m = w.add_mounts();
    m->set_host_path(storage.string());
    m->set_mount_path("/data");
    return w;
  };
  auto said = [&](const std::string& id, const std::string& what) {
    return Eventually(
               [&] { return Read(root_ / id / "stdout.log").find(what) != std::string::npos; })
               ? what
               : Read(root_ / id / "stdout.log") + Read(root_ / id / "stderr.log");
  };
  ASSERT_TRUE(runtime_
                  ->Start(of("a.1", "t1",
                             "echo a1 > /data/a.txt && (umask 077; echo p > /data/p.txt) && "
                             "echo wrote; until [ -e /data/b.txt ]; do sleep 0.1; done; "
                             "echo a2 >> /data/a.txt && echo appended"))
                  .ok());
  ASSERT_EQ(said("a.1", "wrote"), "wrote");
  ASSERT_TRUE(runtime_
                  ->Start(of("b.1", "t1",
                             "echo b1 >> /data/a.txt && echo b1 >> /data/p.txt && "
                             "echo b1 >> /data/models/seed.txt && echo b > /data/b.txt && "
                             "echo b-wrote"))
                  .ok());
  EXPECT_EQ(said("b.1", "b-wrote"), "b-wrote");
  EXPECT_EQ(said("a.1", "appended"), "appended") << "the later start took A's files";
  EXPECT_EQ(Read(storage / "a.txt"), "a1\nb1\na2\n");
  EXPECT_EQ(Read(storage / "p.txt"), "p\nb1\n");
  EXPECT_EQ(Read(storage / "models" / "seed.txt"), "s3\nb1\n");

  // Each its own uid, one group: the tenant's, kept for the next runtime.
  const std::string a_ids = Read(root_ / "a.1" / "stdout.log");
  const std::string b_ids = Read(root_ / "b.1" / "stdout.log");
  EXPECT_EQ(a_ids.substr(0, 17), "ids 300000 310000") << a_ids;
  EXPECT_EQ(b_ids.substr(0, 17), "ids 300001 310000") << b_ids;
  EXPECT_EQ(Read(root_ / "tenant-gids"), "t1 310000\n");
  struct stat st;
  ASSERT_EQ(stat(storage.c_str(), &st), 0);
  EXPECT_EQ(st.st_gid, 310000u);
  EXPECT_EQ(st.st_mode & 07777, 02770u);
  ASSERT_EQ(stat((storage / "a.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 300000u) << "owners stay";
  EXPECT_EQ(st.st_mode & 0777, 0660u);

  // Another tenant's workload, with its own storage: its uid and gid open nothing in this one,
  // even from outside its sandbox; A's own ids still do.
  pb::Workload other = Workload("c.1", "echo ids $(id -u) $(id -g); exec sleep 600");
  other.set_tenant_id("t2");
  Mount(other, "t2-data", "/data", false);
  ASSERT_TRUE(runtime_->Start(other).ok());
  ASSERT_EQ(said("c.1", "ids 300002 310001"), "ids 300002 310001");
  auto open_as = [](uid_t uid, gid_t gid, const fs::path& path) {
    const pid_t child = fork();
    if (child == 0) {
      if (setgroups(0, nullptr) != 0 || setgid(gid) != 0 || setuid(uid) != 0) _exit(100);
      const int fd = open(path.c_str(), O_RDONLY);
      _exit(fd >= 0 ? 0 : errno);
    }
    int status = 0;
    waitpid(child, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  for (const char* file : {"a.txt", "p.txt", "models/seed.txt"}) {
    EXPECT_EQ(open_as(300002, 310001, storage / file), EACCES) << file;
    EXPECT_EQ(open_as(300000, 310000, storage / file), 0) << file;
  }

  runtime_ = New(300000, 300009, 310000, 310009);  // the agent restarts: t1 keeps its group
  ASSERT_TRUE(runtime_->Start(of("d.1", "t1", "echo d >> /data/a.txt && echo d-wrote")).ok());
  EXPECT_EQ(said("d.1", "ids 300003 310000"), "ids 300003 310000");
  EXPECT_EQ(said("d.1", "d-wrote"), "d-wrote");
}

TEST_F(ProcessRuntimeTest, LogsStayUnderTheirCap) {
  ASSERT_TRUE(
      runtime_->Start(Workload("chatty.1", "head -c 100000000 /dev/zero | tr '\\0' x")).ok());
  ASSERT_TRUE(WaitState("chatty.1", pb::WORKLOAD_STATE_EXITED, absl::Seconds(60)));
  std::error_code ec;
  const auto size = [&](const char* name) {
    const fs::path p = root_ / "chatty.1" / name;
    return fs::exists(p) ? fs::file_size(p, ec) : 0;
  };
  EXPECT_LE(size("stdout.log") + size("stdout.log.1"), 1u << 20);
  EXPECT_GT(size("stdout.log") + size("stdout.log.1"), 0u);
}

}  // namespace
}  // namespace gpuaas::agent
