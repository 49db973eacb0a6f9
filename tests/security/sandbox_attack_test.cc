// Attacks from inside a workload's sandbox, on the real platform (real agents running real
// bubblewrap sandboxes): taking the node's whole host-port range, calling into the kernel's
// wider interfaces (keyrings, BPF, ptrace, namespaces), and reaching another tenant's workload
// as the same user, or its storage.
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
#include <map>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "libs/testing/eventually.h"
#include "libs/testing/pg_test.h"
#include "libs/testing/temp_dir.h"
#include "services/agent/runtime/landlock.h"
#include "tests/platform/platform_stack.h"

namespace gpuaas::platform_testing {
namespace {

namespace fs = std::filesystem;
using gpuaas::testing::Eventually;

bool Running(const instancepb::Instance& i) { return i.state() == instancepb::STATE_RUNNING; }

std::string Slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The pid of a process running as `uid`, or 0.
pid_t ProcessOf(uid_t uid) {
  std::error_code ec;
  for (const auto& d : fs::directory_iterator("/proc", ec)) {
    pid_t pid = 0;
    if (!absl::SimpleAtoi(d.path().filename().string(), &pid)) continue;
    struct stat st;
    if (stat(d.path().c_str(), &st) == 0 && st.st_uid == uid) return pid;
  }
  return 0;
}

// What a host process running as `uid`:`gid` gets when it reads `file` and signals `pid`:
// "<open's errno> <kill's errno>", 0 for success.
std::string AsUid(uid_t uid, gid_t gid, const fs::path& file, pid_t pid) {
  int answer_pipe[2];
  if (pipe(answer_pipe) != 0) return "pipe";
  const pid_t child = fork();
  if (child == 0) {
    close(answer_pipe[0]);
    int open_errno = -1, kill_errno = -1;
    if (setgroups(0, nullptr) == 0 && setgid(gid) == 0 && setuid(uid) == 0) {
      const int fd = open(file.c_str(), O_RDONLY);
      open_errno = fd >= 0 ? 0 : errno;
      kill_errno = kill(pid, 0) == 0 ? 0 : errno;
    }
    const std::string answer = absl::StrCat(open_errno, " ", kill_errno);
    (void)!write(answer_pipe[1], answer.data(), answer.size());
    _exit(0);
  }
  close(answer_pipe[1]);
  char buf[64] = {};
  (void)!read(answer_pipe[0], buf, sizeof buf - 1);
  close(answer_pipe[0]);
  waitpid(child, nullptr, 0);
  return buf;
}

// A storage an instance mounts at /data.
struct Data {
  std::string storage_id;  // none when empty
  bool read_only = false;
};

class SandboxAttackTest : public gpuaas::testing::PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped()) return;
    if (geteuid() != 0) GTEST_SKIP() << "workloads get uids of their own only under a root agent";
    PlatformOptions options;
    options.agents = {{"node-a", "4xA100-80GB"}};
    stack_ = std::make_unique<PlatformStack>(dsn(), dir_.path(), options);
    attacker_ = stack_->CreateTenant("mallory");
    victim_ = stack_->CreateTenant("alice");
    stack_->CreateSpecWithStocks("a100.1x", "A100-80GB", 1, 0, 4, 3600000000);
  }
  void TearDown() override {
    stack_.reset();
    PgTest::TearDown();
  }

  // Creates an instance running `cmd` with template port `port` (none for 0; an HTTP probe when
  // `probe`) and waits until it is RUNNING.
  instancepb::Instance Run(const std::string& token, const std::string& id, const std::string& cmd,
                           int port = 0, bool probe = true,
                           const std::map<std::string, std::string>& envs = {},
                           const Data& data = {}) {
    instancepb::CreateInstanceRequest req;
    req.set_instance_id(id);
    req.set_spec_name("a100.1x");
    instancepb::Template* t = req.mutable_template_();
    t->set_cmd(cmd);
    if (port != 0) {
      instancepb::Port* p = t->add_ports();
      p->set_port(port);
      p->set_is_probe(probe);
    }
    for (const auto& [name, value] : envs) {
      instancepb::Env* e = t->add_envs();
      e->set_name(name);
      e->set_value(value);
    }
    if (!data.storage_id.empty()) {
      req.set_storage_id(data.storage_id);
      instancepb::Volume* v = t->add_volumes();
      v->set_name("data");
      v->set_mount_path("/data");
      v->set_read_only(data.read_only);
    }
    instancepb::Instance created;
    const grpc::Status s =
        stack_->instances().CreateInstance(PlatformStack::Ctx(token).get(), req, &created);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return stack_->WaitInstance(token, id, Running);
  }

  // The directory of the instance's workload on node-a.
  fs::path WorkloadDir(const std::string& instance_id) {
    std::error_code ec;
    for (const auto& d : fs::directory_iterator(stack_->workload_root("node-a"), ec)) {
      if (d.path().filename().string().rfind(instance_id + ".", 0) == 0) return d.path();
    }
    return {};
  }

  // The workload's stdout once it holds `marker` (or what it holds after 20 s).
  std::string OutputWith(const std::string& instance_id, const std::string& marker) {
    std::string out;
    Eventually(
        [&] {
          out = Slurp(WorkloadDir(instance_id) / "stdout.log");
          return out.find(marker) != std::string::npos;
        },
        absl::Seconds(20));
    return out;
  }

  gpuaas::testing::TempDir dir_;
  std::unique_ptr<PlatformStack> stack_;
  std::string attacker_;
  std::string victim_;
};

// A workload binds every port of the node's host-port range and holds them, so that every later
// instance finds no free port. Landlock lets a workload bind only its own ports of the range;
// ports outside it (ephemeral ones, as notebook kernels use) stay open.
TEST_F(SandboxAttackTest, AWorkloadCannotTakeTheNodesHostPortRange) {
  if (agent::LandlockAbi() < agent::kLandlockPortsAbi) {
    GTEST_SKIP() << "this kernel's Landlock cannot confine ports (the agent warns of it)";
  }
  const auto [first, last] = stack_->port_range("node-a");
  const std::string hog = R"(cat > /tmp/hog.py <<'END'
import errno, os, socket, time
own = int(os.environ["GPUAAS_PORT_9000"])
held, denied = [], 0
for port in range(int(os.environ["FIRST"]), int(os.environ["LAST"]) + 1):
    s = socket.socket()
    try:
        s.bind(("0.0.0.0", port))
        s.listen()
        held.append(port)
    except OSError as e:
        denied += e.errno == errno.EACCES
print("held", held, "own", own, "denied", denied, flush=True)
free = socket.socket()
free.bind(("127.0.0.1", 0))
print("ephemeral ok", flush=True)
time.sleep(600)
END
exec python3 /tmp/hog.py)";
  const instancepb::Instance hogging =
      Run(attacker_, "hog", hog, 9000, /*probe=*/false,
          {{"FIRST", absl::StrCat(first)}, {"LAST", absl::StrCat(last)}});
  ASSERT_TRUE(Running(hogging)) << stack_->agent("node-a").Log();
  const std::string out = OutputWith("hog", "ephemeral ok");
  ASSERT_NE(out.find("ephemeral ok"), std::string::npos) << out;
  // Its own port was free to take; every other one of the range was refused.
  const int own = hogging.ports(0).host_port();
  EXPECT_NE(out.find(absl::StrCat("held [", own, "] own ", own, " denied ", last - first)),
            std::string::npos)
      << out;

  // The legitimate path: the next instance still gets a port of the range and serves on it.
  const instancepb::Instance web =
      Run(victim_, "web", "exec python3 -m http.server \"$GPUAAS_PORT_8080\" --bind 0.0.0.0", 8080);
  ASSERT_TRUE(Running(web)) << web.message();
  ASSERT_EQ(web.ports_size(), 1);
  EXPECT_GE(web.ports(0).host_port(), first);
  EXPECT_LE(web.ports(0).host_port(), last);
}

// A workload calls into parts of the kernel a GPU workload never needs: the seccomp filter
// answers each with EPERM, and the program goes on (fork and exec still work).
TEST_F(SandboxAttackTest, AWorkloadGetsEpermFromKeyringsBpfPtraceAndNamespaces) {
  const std::string probe = R"(cat > /tmp/probe.py <<'END'
import ctypes, errno, subprocess
libc = ctypes.CDLL(None, use_errno=True)
calls = {  # x86_64 numbers
    "keyctl": (250, 0, 0, 0, 0, 0),
    "add_key": (248, b"user", b"k", b"v", 1, -3),
    "bpf": (321, 0, 0, 0),
    "perf_event_open": (298, 0, 0, -1, -1, 0),
    "userfaultfd": (323, 0),
    "ptrace": (101, 16, 1, 0, 0),
    "unshare": (272, 0x10000000),
    "setns": (308, 0, 0),
    "mount": (165, b"none", b"/tmp", b"tmpfs", 0, 0),
    "kexec_load": (246, 0, 0, 0, 0),
    "init_module": (175, 0, 0, b""),
    "open_by_handle_at": (304, 0, 0, 0),
}
for name, (nr, *args) in calls.items():
    r = libc.syscall(nr, *args)
    print(name, "ok" if r >= 0 else errno.errorcode.get(ctypes.get_errno(), "?"), flush=True)
print("exec", subprocess.run(["true"]).returncode, flush=True)
print("done", flush=True)
END
python3 /tmp/probe.py; exec sleep 600)";
  ASSERT_TRUE(Running(Run(attacker_, "probe", probe)));
  const std::string out = OutputWith("probe", "done");
  for (const char* call :
       {"keyctl", "add_key", "bpf", "perf_event_open", "userfaultfd", "ptrace", "unshare", "setns",
        "mount", "kexec_load", "init_module", "open_by_handle_at"}) {
    EXPECT_NE(out.find(absl::StrCat(call, " EPERM\n")), std::string::npos) << call << ":\n" << out;
  }
  EXPECT_NE(out.find("exec 0\n"), std::string::npos) << out;
}

// Two tenants' workloads on one node run as two uids: a process of one that got out of its
// sandbox's mount and PID namespaces still cannot read the other's home or signal its processes.
TEST_F(SandboxAttackTest, TwoWorkloadsRunAsDifferentUidsAndCannotReachEachOther) {
  const std::string cmd = "echo uid $(id -u); echo secret > \"$HOME/secret\"; exec sleep 600";
  ASSERT_TRUE(Running(Run(victim_, "victim", cmd)));
  ASSERT_TRUE(Running(Run(attacker_, "attacker", cmd)));
  uid_t victim_uid = 0, attacker_uid = 0;
  std::string victim_out = OutputWith("victim", "\n");
  std::string attacker_out = OutputWith("attacker", "\n");
  ASSERT_TRUE(absl::SimpleAtoi(victim_out.substr(4, victim_out.find('\n') - 4), &victim_uid))
      << victim_out;
  ASSERT_TRUE(absl::SimpleAtoi(attacker_out.substr(4, attacker_out.find('\n') - 4), &attacker_uid))
      << attacker_out;
  EXPECT_NE(victim_uid, attacker_uid);
  EXPECT_NE(victim_uid, 65534u) << "not the shared nobody";
  ASSERT_TRUE(Eventually([&] { return fs::exists(WorkloadDir("victim") / "home" / "secret"); }));
  ASSERT_TRUE(Eventually([&] { return fs::exists(WorkloadDir("attacker") / "home" / "secret"); }));
  const pid_t victim_pid = ProcessOf(victim_uid);
  const pid_t attacker_pid = ProcessOf(attacker_uid);
  ASSERT_GT(victim_pid, 0);
  ASSERT_GT(attacker_pid, 0);

  EXPECT_EQ(
      AsUid(attacker_uid, attacker_uid, WorkloadDir("victim") / "home" / "secret", victim_pid),
      absl::StrCat(EACCES, " ", EPERM));
  // The legitimate path: its own home and processes.
  EXPECT_EQ(
      AsUid(attacker_uid, attacker_uid, WorkloadDir("attacker") / "home" / "secret", attacker_pid),
      "0 0");
}

// The uid and gid a workload printed first ("ids <uid> <gid>").
std::pair<uid_t, gid_t> IdsIn(const std::string& out) {
  std::istringstream in(out);
  std::string word;
  uid_t uid = 0;
  gid_t gid = 0;
  in >> word >> uid >> gid;
  return {uid, gid};
}

// A tenant's storage is written by one instance and read by another at once (each its own uid),
// so its files are the tenant's group's, made private (umask 077) or not. Another tenant's
// workload on the node reads none of it: the storage is not in its sandbox, and out of its
// namespaces its uid and gid open nothing there, neither by the storage's host path nor through
// the writer's /proc/<pid>/root.
TEST_F(SandboxAttackTest, AnotherTenantsWorkloadReadsNoStorageFileOfATenantsSharedStorage) {
  stack_->CreateStorage(victim_, "models");
  const std::string ids = "echo ids $(id -u) $(id -g); ";
  ASSERT_TRUE(Running(Run(victim_, "writer",
                          ids + "umask 077; echo alice-secret > /data/secret.txt; exec sleep 600",
                          0, true, {}, {.storage_id = "models"})));
  ASSERT_TRUE(Eventually([&] { return !WorkloadDir("writer").empty(); }));
  instancepb::Workload workload;
  std::ifstream in(WorkloadDir("writer") / "workload.pb", std::ios::binary);
  ASSERT_TRUE(workload.ParseFromIstream(&in) && workload.mounts_size() == 1);
  const fs::path secret = fs::path(workload.mounts(0).host_path()) / "secret.txt";
  ASSERT_TRUE(Eventually([&] { return fs::exists(secret); }));

  // The legitimate path: the tenant's other instance reads the private file.
  ASSERT_TRUE(Running(Run(victim_, "reader", ids + "cat /data/secret.txt; exec sleep 600", 0, true,
                          {}, {.storage_id = "models", .read_only = true})));
  EXPECT_NE(OutputWith("reader", "alice-secret").find("alice-secret"), std::string::npos)
      << Slurp(WorkloadDir("reader") / "stderr.log");

  // The attack: by the host path inside the sandbox, then as its uid and gid outside it.
  ASSERT_TRUE(
      Running(Run(attacker_, "snoop", ids + "cat \"$SECRET\" || echo refused; exec sleep 600", 0,
                  true, {{"SECRET", secret.string()}})));
  const std::string snooped = OutputWith("snoop", "refused");
  EXPECT_NE(snooped.find("refused"), std::string::npos) << snooped;
  EXPECT_EQ(snooped.find("alice-secret"), std::string::npos) << snooped;
  const auto [writer_uid, writer_gid] = IdsIn(OutputWith("writer", "\n"));
  const auto [reader_uid, reader_gid] = IdsIn(OutputWith("reader", "\n"));
  const auto [snoop_uid, snoop_gid] = IdsIn(snooped);
  EXPECT_NE(writer_uid, reader_uid);
  EXPECT_EQ(writer_gid, reader_gid) << "one tenant, one group";
  EXPECT_NE(snoop_gid, writer_gid);
  const pid_t writer_pid = ProcessOf(writer_uid);
  ASSERT_GT(writer_pid, 0);
  const std::string refused = absl::StrCat(EACCES, " ", EPERM);
  EXPECT_EQ(AsUid(snoop_uid, snoop_gid, secret, writer_pid), refused);
  EXPECT_EQ(
      AsUid(snoop_uid, snoop_gid,
            fs::path("/proc") / std::to_string(writer_pid) / "root/data/secret.txt", writer_pid),
      refused);
  EXPECT_EQ(AsUid(reader_uid, reader_gid, secret, writer_pid), absl::StrCat(0, " ", EPERM));
}

// Workloads share the host's network namespace, and with it the abstract unix socket names: a
// workload connects to the one another tenant's workload listens on (as a notebook kernel or an
// X server might). Landlock (ABI 6) scopes abstract sockets to the workload's own domain.
TEST_F(SandboxAttackTest, AWorkloadCannotConnectToAnotherWorkloadsAbstractSocket) {
  if (agent::LandlockAbi() < agent::kLandlockScopeAbi) {
    GTEST_SKIP() << "this kernel's Landlock cannot scope sockets (the agent warns of it)";
  }
  const std::string listener = R"(cat > /tmp/listen.py <<'END'
import socket, time
s = socket.socket(socket.AF_UNIX)
s.bind("\0gpuaas-attack-victim")
s.listen()
c = socket.socket(socket.AF_UNIX)
c.connect("\0gpuaas-attack-victim")
print("self ok", flush=True)
time.sleep(600)
END
exec python3 /tmp/listen.py)";
  ASSERT_TRUE(Running(Run(victim_, "listener", listener)));
  // The legitimate path: the workload reaches its own socket.
  const std::string listening = OutputWith("listener", "self ok");
  ASSERT_NE(listening.find("self ok"), std::string::npos) << listening;

  const std::string connector = R"(cat > /tmp/connect.py <<'END'
import errno, socket
c = socket.socket(socket.AF_UNIX)
try:
    c.connect("\0gpuaas-attack-victim")
    print("connect ok", flush=True)
except OSError as e:
    print("connect", errno.errorcode.get(e.errno, e.errno), flush=True)
END
python3 /tmp/connect.py; exec sleep 600)";
  ASSERT_TRUE(Running(Run(attacker_, "connector", connector)));
  const std::string out = OutputWith("connector", "connect");
  EXPECT_NE(out.find("connect EPERM"), std::string::npos) << out;
}

}  // namespace
}  // namespace gpuaas::platform_testing
