// Attacks from inside a workload, on the real platform (real agents running each workload as a
// container: a user namespace with its own id block, its own network namespace, seccomp):
// taking the node's whole host-port range, calling into the kernel's wider interfaces
// (keyrings, BPF, ptrace, namespaces), and reaching another tenant's workload or its storage as
// its ids on the node.
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "libs/testing/ci_skip.h"
#include "libs/testing/eventually.h"
#include "libs/testing/pg_test.h"
#include "libs/testing/temp_dir.h"
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

// The pid of the process whose command line is `cmdline` (its arguments joined by spaces), or 0.
pid_t ProcessWith(const std::string& cmdline) {
  std::error_code ec;
  for (const auto& d : fs::directory_iterator("/proc", ec)) {
    pid_t pid = 0;
    if (!absl::SimpleAtoi(d.path().filename().string(), &pid)) continue;
    std::string line = Slurp(d.path() / "cmdline");
    std::replace(line.begin(), line.end(), '\0', ' ');
    if (absl::StripTrailingAsciiWhitespace(line) == cmdline) return pid;
  }
  return 0;
}

// Whether a TCP connection to 127.0.0.1:`port` from this (the node's) process is accepted.
bool NodeConnects(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  close(fd);
  return ok;
}

// A workload's process as the node sees it: its ids there (a container's root is its id
// block's first id) and its groups.
struct HostIds {
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
};
HostIds IdsOf(pid_t pid) {
  HostIds ids;
  std::istringstream status(Slurp(fs::path("/proc") / std::to_string(pid) / "status"));
  for (std::string line; std::getline(status, line);) {
    std::istringstream fields(line.substr(line.find(':') + 1));
    if (line.starts_with("Uid:")) fields >> ids.uid;
    if (line.starts_with("Gid:")) fields >> ids.gid;
    for (gid_t g; line.starts_with("Groups:") && fields >> g;) ids.groups.push_back(g);
  }
  return ids;
}

// What a host process with `ids` gets when it reads `file` and signals `pid`:
// "<open's errno> <kill's errno>", 0 for success.
std::string AsUid(const HostIds& ids, const fs::path& file, pid_t pid) {
  int answer_pipe[2];
  if (pipe(answer_pipe) != 0) return "pipe";
  const pid_t child = fork();
  if (child == 0) {
    close(answer_pipe[0]);
    int open_errno = -1, kill_errno = -1;
    if (setgroups(ids.groups.size(), ids.groups.data()) == 0 && setgid(ids.gid) == 0 &&
        setuid(ids.uid) == 0) {
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
    if (geteuid() != 0)
      GPUAAS_SKIP_OR_FAIL_IN_CI() << "workloads get uids of their own only under a root agent";
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
// instance would find no free port. In its own network namespace those ports are its own: the
// node's stay free, the next instance gets one of the range and the node reaches it there.
TEST_F(SandboxAttackTest, AWorkloadCannotTakeTheNodesHostPortRange) {
  const auto [first, last] = stack_->port_range("node-a");
  const std::string hog = R"(cat > /tmp/hog.py <<'END'
import os, socket, time
held = []
for port in range(int(os.environ["FIRST"]), int(os.environ["LAST"]) + 1):
    s = socket.socket()
    try:
        s.bind(("0.0.0.0", port))
        s.listen()
        held.append(s)
    except OSError:
        pass
print("held", len(held), flush=True)
time.sleep(600)
END
exec python3 /tmp/hog.py)";
  const instancepb::Instance hogging =
      Run(attacker_, "hog", hog, 9000, /*probe=*/false,
          {{"FIRST", absl::StrCat(first)}, {"LAST", absl::StrCat(last)}});
  ASSERT_TRUE(Running(hogging)) << stack_->agent("node-a").Log();
  const std::string out = OutputWith("hog", "held");
  EXPECT_NE(out.find(absl::StrCat("held ", last - first + 1, "\n")), std::string::npos)
      << "the attack ran (every port held in its own namespace):\n"
      << out;

  // The legitimate path: the next instance still gets a port of the range and serves on it.
  const instancepb::Instance web =
      Run(victim_, "web", "exec python3 -m http.server \"$GPUAAS_PORT_8080\" --bind 0.0.0.0", 8080);
  ASSERT_TRUE(Running(web)) << web.message();
  ASSERT_EQ(web.ports_size(), 1);
  const int port = web.ports(0).host_port();
  EXPECT_GE(port, first);
  EXPECT_LE(port, last);
  EXPECT_TRUE(Eventually([&] { return NodeConnects(port); })) << "the node reaches port " << port;
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

// Two tenants' workloads on one node run as two unprivileged ids of the node (each container's
// root is the first id of its own block): a process of one that got out of its namespaces still
// cannot read the other's files (through its /proc/<pid>/root) or signal its processes.
TEST_F(SandboxAttackTest, TwoWorkloadsRunAsDifferentUidsAndCannotReachEachOther) {
  ASSERT_TRUE(Running(Run(victim_, "victim", "echo secret > /tmp/secret; exec sleep 6001")));
  ASSERT_TRUE(Running(Run(attacker_, "attacker", "echo secret > /tmp/secret; exec sleep 6002")));
  pid_t victim_pid = 0, attacker_pid = 0;
  ASSERT_TRUE(Eventually([&] {
    victim_pid = ProcessWith("sleep 6001");
    attacker_pid = ProcessWith("sleep 6002");
    return victim_pid > 0 && attacker_pid > 0;
  }));
  const HostIds victim = IdsOf(victim_pid);
  const HostIds attacker = IdsOf(attacker_pid);
  EXPECT_NE(victim.uid, attacker.uid);
  EXPECT_NE(victim.uid, 0u) << "not root on the node";
  EXPECT_NE(attacker.uid, 0u) << "not root on the node";
  EXPECT_NE(victim.uid, 65534u) << "not the shared nobody";
  const fs::path victim_secret = fs::path("/proc") / std::to_string(victim_pid) / "root/tmp/secret";
  const fs::path own_secret = fs::path("/proc") / std::to_string(attacker_pid) / "root/tmp/secret";
  ASSERT_TRUE(Eventually([&] { return fs::exists(victim_secret) && fs::exists(own_secret); }));

  EXPECT_EQ(AsUid(attacker, victim_secret, victim_pid), absl::StrCat(EACCES, " ", EPERM));
  // The legitimate path: its ids do signal its own process (out of its user namespace even its
  // own /proc/<pid>/root is closed to them: only the node's root, as above, sees the files).
  EXPECT_EQ(AsUid(attacker, own_secret, attacker_pid), absl::StrCat(EACCES, " ", 0));
}

// Whether `a` and `b` share a group (primary or supplementary).
bool ShareAGroup(const HostIds& a, const HostIds& b) {
  std::vector<gid_t> mine = a.groups;
  mine.push_back(a.gid);
  for (gid_t g : mine) {
    if (g == b.gid || std::find(b.groups.begin(), b.groups.end(), g) != b.groups.end()) return true;
  }
  return false;
}

// A tenant's storage is written by one instance and read by another at once (each its own uid),
// so its files are the tenant's group's, made private (umask 077) or not. Another tenant's
// workload on the node reads none of it: the storage is not in its sandbox, and out of its
// namespaces its uid and gid open nothing there, neither by the storage's host path nor through
// the writer's /proc/<pid>/root. Local storages only: the attack is on the volume's host path.
TEST_F(SandboxAttackTest, AnotherTenantsWorkloadReadsNoStorageFileOfATenantsSharedStorage) {
  stack_->CreateStorage(victim_, "models");
  ASSERT_TRUE(Running(Run(victim_, "writer",
                          "umask 077; echo alice-secret > /data/secret.txt; exec sleep 6003", 0,
                          true, {}, {.storage_id = "models"})));
  ASSERT_TRUE(Eventually([&] { return !WorkloadDir("writer").empty(); }));
  instancepb::Workload workload;
  std::ifstream in(WorkloadDir("writer") / "workload.pb", std::ios::binary);
  ASSERT_TRUE(workload.ParseFromIstream(&in) && workload.mounts_size() == 1);
  const fs::path secret = fs::path(workload.mounts(0).host_path()) / "secret.txt";
  ASSERT_TRUE(Eventually([&] { return fs::exists(secret); }));

  // The legitimate path: the tenant's other instance reads the private file.
  ASSERT_TRUE(Running(Run(victim_, "reader", "cat /data/secret.txt; exec sleep 6004", 0, true, {},
                          {.storage_id = "models", .read_only = true})));
  EXPECT_NE(OutputWith("reader", "alice-secret").find("alice-secret"), std::string::npos)
      << Slurp(WorkloadDir("reader") / "stderr.log");

  // The attack: by the host path inside the sandbox, then as its uid and gid outside it.
  ASSERT_TRUE(Running(Run(attacker_, "snoop", "cat \"$SECRET\" || echo refused; exec sleep 6005", 0,
                          true, {{"SECRET", secret.string()}})));
  const std::string snooped = OutputWith("snoop", "refused");
  EXPECT_NE(snooped.find("refused"), std::string::npos) << snooped;
  EXPECT_EQ(snooped.find("alice-secret"), std::string::npos) << snooped;
  const pid_t writer_pid = ProcessWith("sleep 6003");
  const pid_t reader_pid = ProcessWith("sleep 6004");
  const pid_t snoop_pid = ProcessWith("sleep 6005");
  ASSERT_TRUE(writer_pid > 0 && reader_pid > 0 && snoop_pid > 0);
  const HostIds writer = IdsOf(writer_pid);
  const HostIds reader = IdsOf(reader_pid);
  const HostIds snoop = IdsOf(snoop_pid);
  EXPECT_NE(writer.uid, reader.uid);
  EXPECT_TRUE(ShareAGroup(writer, reader)) << "one tenant, one group";
  EXPECT_FALSE(ShareAGroup(snoop, writer));
  const std::string refused = absl::StrCat(EACCES, " ", EPERM);
  EXPECT_EQ(AsUid(snoop, secret, writer_pid), refused);
  EXPECT_EQ(AsUid(snoop, fs::path("/proc") / std::to_string(writer_pid) / "root/data/secret.txt",
                  writer_pid),
            refused);
  EXPECT_EQ(AsUid(reader, secret, writer_pid), absl::StrCat(0, " ", EPERM));
}

// A workload connects to the abstract unix socket another tenant's workload listens on (as a
// notebook kernel or an X server might). Abstract names belong to a network namespace, and each
// workload has its own (bubblewrap sandboxes shared the node's and relied on Landlock scoping).
TEST_F(SandboxAttackTest, AWorkloadCannotConnectToAnotherWorkloadsAbstractSocket) {
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
  EXPECT_NE(out.find("connect E"), std::string::npos) << out;
  EXPECT_EQ(out.find("connect ok"), std::string::npos) << out;
}

}  // namespace
}  // namespace gpuaas::platform_testing
