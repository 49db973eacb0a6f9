// Attacks from inside a container (issue 23), on the real platform: real services and agents
// running each workload as an OCI container (runc, a user namespace of its own, its own network
// namespace, limits from the spec, seccomp). A hostile tenant's workload runs the attack and
// prints what it got; the test reads it back through the instance's logs and asserts it failed,
// and that the legitimate path (the node reaching a workload's host port, the tenant's own image
// with its login) still works. Images come from the ctest fixture `registry`.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "libs/db/dsn.h"
#include "libs/testing/ci_skip.h"
#include "libs/testing/eventually.h"
#include "libs/testing/pg_test.h"
#include "libs/testing/temp_dir.h"
#include "tests/common/child_process.h"
#include "tests/common/hostile_registry.h"
#include "tests/common/image_pin_wait.h"
#include "tests/images/test_registry.h"
#include "tests/platform/platform_stack.h"
#include "tests/proxy/proxy_process.h"

namespace gpuaas::platform_testing {
namespace {

namespace fs = std::filesystem;
using gpuaas::testing::Eventually;

// The test spec's limits: small, so that a hog reaches them in a moment.
constexpr char kSpec[] = "c.small";
constexpr char kMemory[] = "128Mi";
constexpr int64_t kDiskBytes = 64 << 20;
constexpr int kPids = 64;

bool Running(const instancepb::Instance& i) { return i.state() == instancepb::STATE_RUNNING; }
bool Failed(const instancepb::Instance& i) { return i.state() == instancepb::STATE_FAILED; }

// Whether a TCP connection to `host`:`port` from this (the node's) process is accepted.
bool NodeConnects(const std::string& host, int port) {
  const bool v6 = absl::StrContains(host, ':');
  const int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_storage addr{};
  socklen_t len = 0;
  if (v6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&addr);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(port);
    inet_pton(AF_INET6, host.c_str(), &a->sin6_addr);
    len = sizeof *a;
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&addr);
    a->sin_family = AF_INET;
    a->sin_port = htons(port);
    inet_pton(AF_INET, host.c_str(), &a->sin_addr);
    len = sizeof *a;
  }
  const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), len) == 0;
  close(fd);
  return ok;
}

// The node's addresses a workload might try besides 127.0.0.1: ::1 and every IPv4 address of
// its interfaces but the host ends of workloads' links (gpw*: one per container of every agent
// on the machine; the attacker's own gateway and the victim's are tried by name).
std::vector<std::string> NodeAddresses() {
  std::vector<std::string> out = {"127.0.0.1", "::1"};
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return out;
  for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
    if (absl::StartsWith(i->ifa_name, "gpw")) continue;
    char text[INET_ADDRSTRLEN] = {};
    inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, text, sizeof text);
    if (std::find(out.begin(), out.end(), text) == out.end()) out.push_back(text);
  }
  freeifaddrs(list);
  return out;
}

// The port of "127.0.0.1:PORT" or "http://127.0.0.1:PORT".
int PortOf(const std::string& address) {
  int port = 0;
  EXPECT_TRUE(absl::SimpleAtoi(address.substr(address.rfind(':') + 1), &port)) << address;
  return port;
}

// The stdout of `command` run by /bin/sh, its trailing whitespace stripped.
std::string Shell(const std::string& command) {
  std::string out;
  if (FILE* p = popen(command.c_str(), "r")) {
    std::array<char, 256> buf{};
    while (fgets(buf.data(), buf.size(), p) != nullptr) out += buf.data();
    pclose(p);
  }
  return std::string(absl::StripAsciiWhitespace(out));
}

// The pid of the process whose command line holds `needle`, or 0.
pid_t ProcessWith(const std::string& needle) {
  std::error_code ec;
  for (const auto& d : fs::directory_iterator("/proc", ec)) {
    pid_t pid = 0;
    if (!absl::SimpleAtoi(d.path().filename().string(), &pid)) continue;
    std::ifstream in(d.path() / "cmdline");
    std::stringstream s;
    s << in.rdbuf();
    if (absl::StrContains(s.str(), needle)) return pid;
  }
  return 0;
}

// The line of `out` that starts with `name` and a space, or "".
std::string Line(const std::string& out, const std::string& name) {
  for (absl::string_view line : absl::StrSplit(out, '\n')) {
    if (absl::StartsWith(line, name + " ")) return std::string(line);
  }
  return "";
}

// Whether an event of the instance is FAILED for `reason`.
bool HasFailedEvent(const instancepb::Instance& i, instancepb::Reason reason) {
  for (const instancepb::Event& e : i.events()) {
    if (e.state() == instancepb::STATE_FAILED && e.reason() == reason) return true;
  }
  return false;
}

class ContainerAttackTest : public gpuaas::testing::PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped()) return;
    if (geteuid() != 0) GPUAAS_SKIP_OR_FAIL_IN_CI() << "the agent runs containers only as root";
    PlatformOptions options;
    options.agents = {{"node-a", "4xA100-80GB"}};
    options.instance_flags = {absl::StrCat("--workload-pids=", kPids)};
    // The operator allows the fixture's registries, and the port mallory's own registry will
    // listen on (a LAN registry the operator allowed: what its digest check must hold against).
    for (auto registry :
         {images_testing::OpenTestRegistry(), images_testing::LoginTestRegistry()}) {
      if (registry.ok()) options.registries.push_back(registry->address);
    }
    mallorys_registry_port_ = gpuaas::testing::FreePort();
    options.registries.push_back(absl::StrCat("127.0.0.1:", mallorys_registry_port_));
    stack_ = std::make_unique<PlatformStack>(dsn(), dir_.path(), options);
    mallory_ = stack_->CreateTenant("mallory");
    victim_ = stack_->CreateTenant("victim");
    stack_->CreateSpecWithStocks(kSpec, "A100-80GB", 1, 0, 4, 3600000000, kMemory,
                                 absl::StrCat(kDiskBytes >> 20, "Mi"));
  }
  void TearDown() override {
    stack_.reset();
    PgTest::TearDown();
  }

  // Creates instance `id` of `token`'s tenant running `cmd` (from `image`, "" for the node's
  // /usr) with template port `port` (none for 0) probed over TCP; returns the create's status.
  grpc::Status Create(const std::string& token, const std::string& id, const std::string& cmd,
                      int port = 0, const std::string& image = "",
                      const std::map<std::string, std::string>& envs = {}) {
    instancepb::CreateInstanceRequest req;
    req.set_instance_id(id);
    req.set_spec_name(kSpec);
    req.set_image(image);
    instancepb::Template* t = req.mutable_template_();
    t->set_cmd(cmd);
    if (port != 0) {
      instancepb::Port* p = t->add_ports();
      p->set_port(port);
      p->set_is_probe(true);
    }
    for (const auto& [name, value] : envs) {
      instancepb::Env* e = t->add_envs();
      e->set_name(name);
      e->set_value(value);
    }
    instancepb::Instance created;
    return stack_->instances().CreateInstance(PlatformStack::Ctx(token).get(), req, &created);
  }

  // Creates it and waits until it is RUNNING.
  instancepb::Instance Run(const std::string& token, const std::string& id, const std::string& cmd,
                           int port = 0, const std::string& image = "",
                           const std::map<std::string, std::string>& envs = {}) {
    const grpc::Status s = Create(token, id, cmd, port, image, envs);
    EXPECT_TRUE(s.ok()) << s.error_message();
    instancepb::Instance running = stack_->WaitInstance(token, id, Running);
    EXPECT_TRUE(Running(running)) << running.message() << "\n" << stack_->agent("node-a").Log();
    return running;
  }

  // The instance's stdout through GetInstanceLogs once it holds `marker` (what it holds after
  // 20 s otherwise).
  std::string OutputWith(const std::string& token, const std::string& id,
                         const std::string& marker) {
    std::string out;
    Eventually(
        [&] {
          instancepb::GetInstanceLogsRequest req;
          req.set_instance_id(id);
          req.set_stream(instancepb::LOG_STREAM_STDOUT);
          req.set_tail_lines(1000);
          std::unique_ptr<grpc::ClientContext> ctx = PlatformStack::Ctx(token);
          auto reader = stack_->instances().GetInstanceLogs(ctx.get(), req);
          instancepb::LogChunk chunk;
          out.clear();
          while (reader->Read(&chunk)) out += chunk.data();
          reader->Finish();
          return absl::StrContains(out, marker);
        },
        absl::Seconds(20));
    return out;
  }

  // A cmd that runs the python3 `script` (written to /tmp first) and then sleeps.
  static std::string Python(const std::string& script) {
    return absl::StrCat("cat > /tmp/attack.py <<'END'\n", script,
                        "\nEND\npython3 /tmp/attack.py; echo DONE; exec sleep 600");
  }

  gpuaas::testing::TempDir dir_;
  std::unique_ptr<PlatformStack> stack_;
  int mallorys_registry_port_ = 0;
  std::string mallory_;
  std::string victim_;
};

// From inside mallory's container: TCP to the database, every service (auth, stock, storage and
// its S3 endpoint, instance), the agent, the access proxy (and its metrics port), and the victim
// tenant's workload (its declared port and its host port), on the node's loopback and its other
// addresses, its own gateway, the victim's gateway and the victim's own address. Each connect
// has a 1 s bound and runs in parallel.
TEST_F(ContainerAttackTest, AContainerReachesNothingOnTheNodeNorAnotherTenantsWorkload) {
  const instancepb::Instance victim =
      Run(victim_, "victim-web", "exec python3 -m http.server 8080", 8080);
  ASSERT_EQ(victim.ports_size(), 1);
  const int victim_host_port = victim.ports(0).host_port();

  std::vector<std::pair<std::string, int>> services = {
      {"postgres", std::stoi(db::DsnParam(dsn(), "port").value_or("5432"))},
      {"auth", PortOf(stack_->auth().address())},
      {"stock", PortOf(stack_->stock().address())},
      {"storage", PortOf(stack_->storage().address())},
      {"s3", PortOf(stack_->s3_endpoint())},
      {"instance", PortOf(stack_->instance().address())},
      {"agent", PortOf(stack_->agent("node-a").address())},
      {"victim-host-port", victim_host_port},
      {"victim-declared-port", 8080}};
  // The access proxy's port and its metrics port, as on a node that runs one.
  proxy_testing::ProxyProcess proxy(dir_.path(), stack_->instance().address(),
                                    stack_->auth().address(),
                                    stack_->proxy_api_key_file().string());
  services.emplace_back("proxy", proxy.port());
  const std::string proxy_log = proxy.Log();
  const size_t metrics = proxy_log.find("(metrics port ");
  ASSERT_NE(metrics, std::string::npos) << proxy_log;
  services.emplace_back("proxy-metrics", std::atoi(proxy_log.c_str() + metrics + 14));
  // The legitimate path: each listens, and the node (as the proxy does) reaches the victim's
  // workload through its host port. Without this the attack could pass by nothing listening.
  for (const auto& [name, port] : services) {
    if (name == "victim-declared-port") continue;
    EXPECT_TRUE(NodeConnects("127.0.0.1", port)) << name << " does not listen on " << port;
  }
  std::vector<std::string> hosts = NodeAddresses();
  // The victim's own address inside its network namespace, and its gateway (the node's end of
  // its link), as the node sees them.
  const std::string victim_net =
      absl::StrCat("nsenter --net=$(ls -d ", stack_->workload_root("node-a").string(),
                   "/victim-web*)/netns ip -4 ");
  for (const std::string& query :
       {std::string("-o addr show scope global | awk '{print $4}' | cut -d/ -f1"),
        std::string("route show default | awk '{print $3}'")}) {
    std::string address = Shell(victim_net + query);
    if (!address.empty() && !absl::StrContains(address, '\n')) hosts.push_back(address);
  }
  std::vector<std::string> ports;
  for (const auto& [name, port] : services) ports.push_back(absl::StrCat(name, "@", port));

  // Each host with each port, and the attacker's own gateway too; 1 s bounded, in parallel.
  Run(mallory_, "intruder", Python(R"(import concurrent.futures, errno, os, socket
hosts = os.environ["HOSTS"].split(",")
for line in open("/proc/net/route").read().splitlines()[1:]:
    fields = line.split()
    if fields[1] == "00000000":
        hosts.append(socket.inet_ntoa(int(fields[2], 16).to_bytes(4, "little")))
        print("gateway", hosts[-1], flush=True)
def attempt(target):
    name, host, port = target.split("@")
    try:
        socket.create_connection((host, int(port)), timeout=1).close()
        return target, "CONNECTED"
    except socket.timeout:
        return target, "timeout"
    except OSError as e:
        return target, errno.errorcode.get(e.errno, str(e.errno))
targets = [p.replace("@", "@" + h + "@") for h in hosts for p in os.environ["PORTS"].split(",")]
with concurrent.futures.ThreadPoolExecutor(64) as pool:
    for target, result in pool.map(attempt, targets):
        print("try", target, result, flush=True))"),
      0, "", {{"HOSTS", absl::StrJoin(hosts, ",")}, {"PORTS", absl::StrJoin(ports, ",")}});
  const std::string out = OutputWith(mallory_, "intruder", "DONE");
  ASSERT_TRUE(absl::StrContains(out, "DONE")) << out;
  EXPECT_FALSE(Line(out, "gateway").empty()) << out;
  for (const std::string& host : hosts) {
    for (const auto& [name, port] : services) {
      const std::string target = absl::StrCat(name, "@", host, "@", port);
      EXPECT_FALSE(Line(out, "try " + target).empty()) << target << " not tried:\n" << out;
    }
  }
  EXPECT_FALSE(absl::StrContains(out, "CONNECTED")) << out;
  // Still reachable from the node after the attack.
  EXPECT_TRUE(NodeConnects("127.0.0.1", victim_host_port));
}

// A fork bomb inside a container stops at the pids limit (the instance service's
// --workload-pids), not at the node's.
TEST_F(ContainerAttackTest, AForkBombStopsAtThePidsLimit) {
  Run(mallory_, "bomb", Python(R"(import errno, os, time
children = 0
try:
    while True:
        if os.fork() == 0:
            time.sleep(600)
            os._exit(0)
        children += 1
except OSError as e:
    print("bomb", children, errno.errorcode[e.errno], flush=True))"));
  const std::string out = OutputWith(mallory_, "bomb", "DONE");
  const std::string line = Line(out, "bomb");
  ASSERT_FALSE(line.empty()) << out;
  std::vector<std::string> fields = absl::StrSplit(line, ' ');
  ASSERT_EQ(fields.size(), 3u) << line;
  int children = 0;
  ASSERT_TRUE(absl::SimpleAtoi(fields[1], &children)) << line;
  EXPECT_EQ(fields[2], "EAGAIN") << line;
  EXPECT_LT(children, kPids) << line;
  EXPECT_GE(children, kPids - 8) << "stopped well before the limit: " << line;
  // The node still forks (this very test runs commands), and the instance still answers.
  EXPECT_TRUE(Running(stack_->WaitInstance(mallory_, "bomb", Running)));
}

// A memory hog past the spec's memory is OOM killed: the instance FAILED with OOM_KILLED and an
// event saying so, while another tenant's instance on the same node keeps RUNNING.
TEST_F(ContainerAttackTest, AMemoryHogIsOomKilledAndItsNeighbourKeepsRunning) {
  Run(victim_, "neighbour", "echo up; exec sleep 600");
  // The hog is the container's main process (exec), as a tenant's server would be.
  ASSERT_TRUE(
      Create(mallory_, "hog",
             "exec python3 -c 'chunks = []\nwhile True: chunks.append(b\"x\" * (16 << 20))'")
          .ok());
  const instancepb::Instance hog = stack_->WaitInstance(mallory_, "hog", Failed);
  EXPECT_EQ(hog.reason(), instancepb::REASON_OOM_KILLED) << hog.DebugString();
  instancepb::GetInstanceRequest get;
  get.set_instance_id("hog");
  instancepb::Instance with_events;
  ASSERT_TRUE(
      stack_->instances().GetInstance(PlatformStack::Ctx(mallory_).get(), get, &with_events).ok());
  EXPECT_TRUE(HasFailedEvent(with_events, instancepb::REASON_OOM_KILLED))
      << with_events.DebugString();
  const instancepb::Instance neighbour = stack_->WaitInstance(victim_, "neighbour", Running);
  EXPECT_TRUE(Running(neighbour)) << neighbour.DebugString();
  EXPECT_TRUE(absl::StrContains(OutputWith(victim_, "neighbour", "up"), "up"));
}

// Filling the container's disk (its writable layer and /tmp) stops at the spec's disk.
TEST_F(ContainerAttackTest, FillingTheDiskStopsAtTheLimit) {
  Run(mallory_, "filler",
      "head -c 512M /dev/zero > /tmp/fill 2>/tmp/err; echo \"fill rc=$? $(wc -c < /tmp/fill) "
      "$(cat /tmp/err)\"; head -c 8M /dev/zero > /more 2>&1; echo \"root rc=$?\"; "
      "rm /tmp/fill; head -c 1M /dev/zero > /tmp/after && echo \"after ok\"; "
      "echo DONE; exec sleep 600");
  const std::string out = OutputWith(mallory_, "filler", "DONE");
  const std::string fill = Line(out, "fill");
  ASSERT_FALSE(fill.empty()) << out;
  EXPECT_TRUE(absl::StrContains(fill, "No space left")) << fill;
  std::vector<std::string> fields = absl::StrSplit(fill, ' ');
  ASSERT_GE(fields.size(), 3u) << fill;
  int64_t written = 0;
  ASSERT_TRUE(absl::SimpleAtoi(fields[2], &written)) << fill;
  EXPECT_LE(written, kDiskBytes) << fill;
  EXPECT_GE(written, kDiskBytes / 2) << "stopped well before the limit: " << fill;
  EXPECT_NE(Line(out, "root"), "root rc=0") << "the root file system shares the limit:\n" << out;
  // The limit frees again: the workload is not broken, only bounded.
  EXPECT_FALSE(Line(out, "after").empty()) << out;
}

// mount, ptrace of the agent (whose pid the container cannot even see), unshare and raw sockets
// are denied inside a container; its own processes are visible and fork works.
TEST_F(ContainerAttackTest, MountPtraceOfTheAgentUnshareAndRawSocketsAreDenied) {
  const pid_t agent = ProcessWith("--workload-root=" + stack_->workload_root("node-a").string());
  ASSERT_GT(agent, 0);
  Run(mallory_, "escape", Python(R"(import ctypes, errno, os, socket
libc = ctypes.CDLL(None, use_errno=True)
def result(rc):
    return "ok" if rc == 0 else errno.errorcode[ctypes.get_errno()]
agent = int(os.environ["AGENT_PID"])
print("mount", result(libc.mount(b"none", b"/tmp", b"tmpfs", 0, None)), flush=True)
print("unshare-user", result(libc.unshare(0x10000000)), flush=True)
print("unshare-mount", result(libc.unshare(0x00020000)), flush=True)
print("unshare-net", result(libc.unshare(0x40000000)), flush=True)
print("agent-visible", os.path.exists("/proc/%d" % agent), flush=True)
agents = [p for p in os.listdir("/proc") if p.isdigit() and
          b"gpuaas-" + b"agent" in open("/proc/%s/cmdline" % p, "rb").read()]
print("agent-in-proc", len(agents), flush=True)
print("self-visible", os.path.exists("/proc/%d" % os.getpid()), flush=True)
print("ptrace", result(libc.ptrace(ctypes.c_long(16), ctypes.c_long(agent), None, None)), flush=True)
for name, family, kind in (("raw", socket.AF_INET, socket.SOCK_RAW),
                           ("packet", socket.AF_PACKET, socket.SOCK_RAW)):
    try:
        socket.socket(family, kind, 1).close()
        print(name, "ok", flush=True)
    except OSError as e:
        print(name, errno.errorcode[e.errno], flush=True)
child = os.fork()
if child == 0:
    os._exit(0)
os.waitpid(child, 0)
print("fork ok", flush=True))"),
      0, "", {{"AGENT_PID", absl::StrCat(agent)}});
  const std::string out = OutputWith(mallory_, "escape", "DONE");
  EXPECT_EQ(Line(out, "mount"), "mount EPERM") << out;
  EXPECT_EQ(Line(out, "unshare-user"), "unshare-user EPERM") << out;
  EXPECT_EQ(Line(out, "unshare-mount"), "unshare-mount EPERM") << out;
  EXPECT_EQ(Line(out, "unshare-net"), "unshare-net EPERM") << out;
  EXPECT_EQ(Line(out, "agent-visible"), "agent-visible False") << out;
  EXPECT_EQ(Line(out, "agent-in-proc"), "agent-in-proc 0") << out;
  EXPECT_EQ(Line(out, "self-visible"), "self-visible True") << out;
  const std::string ptrace = Line(out, "ptrace");
  EXPECT_TRUE(ptrace == "ptrace ESRCH" || ptrace == "ptrace EPERM") << out;
  EXPECT_EQ(Line(out, "raw"), "raw EPERM") << out;
  EXPECT_EQ(Line(out, "packet"), "packet EPERM") << out;
  EXPECT_FALSE(Line(out, "fork").empty()) << out;
}

// Mallory's own registry serves an index nested 1.5 million deep. Before, the agent's parse of
// it overflowed the agent's stack: the agent died, and every tenant's instances on the node
// lost their starts, stops and logs. Now the parse runs capped, in the sandboxed unpacker:
// mallory's instance fails with the reason, the agent serves on (the same process), and the
// victim's instance on the node still logs and stops, and a new one starts.
TEST_F(ContainerAttackTest, AHostileRegistrysMetadataCostsOnePullNotTheNodesAgent) {
  Run(victim_, "own", "echo VICTIM-ALIVE; exec sleep 600");
  gpuaas::testing::HostileRegistry registry(dir_.path() / "hostile", mallorys_registry_port_);
  ASSERT_TRUE(Eventually([&] { return registry.Answers(); }, absl::Seconds(10)));
  instancepb::CreateImageRequest image;
  image.mutable_image()->set_name("deep");
  image.mutable_image()->set_version("1");
  image.mutable_image()->set_oci_reference(
      registry.Manifest("mallory/deep", gpuaas::testing::HostileRegistry::DeepIndex(1'500'000),
                        gpuaas::testing::HostileRegistry::kIndexType));
  instancepb::Image made;
  grpc::Status s = gpuaas::testing::CreateImageAndWait(
      stack_->images(), [&] { return PlatformStack::Ctx(mallory_); }, image, made);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_TRUE(Create(mallory_, "deep", "exec sleep 600", 0, "deep:1").ok());
  const instancepb::Instance deep = stack_->WaitInstance(mallory_, "deep", Failed);
  EXPECT_EQ(deep.reason(), instancepb::REASON_IMAGE_PULL_FAILED) << deep.DebugString();
  EXPECT_TRUE(absl::StrContains(deep.message(), "nested deeper")) << deep.message();

  // The agent never went away: still running, still SERVING, and the victim's instance on its
  // node still logs, stops, and a new one starts.
  EXPECT_TRUE(stack_->agent("node-a").Running());
  EXPECT_TRUE(gpuaas::testing::WaitServing(stack_->agent("node-a").address()));
  EXPECT_TRUE(absl::StrContains(OutputWith(victim_, "own", "VICTIM-ALIVE"), "VICTIM-ALIVE"));
  instancepb::StopInstanceRequest stop;
  stop.set_instance_id("own");
  instancepb::Instance stopped;
  s = stack_->instances().StopInstance(PlatformStack::Ctx(victim_).get(), stop, &stopped);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(stack_
                ->WaitInstance(victim_, "own",
                               [](const instancepb::Instance& i) {
                                 return i.state() == instancepb::STATE_STOPPED;
                               })
                .state(),
            instancepb::STATE_STOPPED);
  EXPECT_TRUE(Running(Run(victim_, "again", "echo AGAIN; exec sleep 600")));
}

// Tenants' own images from the fixture's registry behind a login.
class ContainerImageAttackTest : public ContainerAttackTest {
 protected:
  void SetUp() override {
    ContainerAttackTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    absl::StatusOr<images_testing::TestRegistry> registry = images_testing::LoginTestRegistry();
    ASSERT_TRUE(registry.ok()) << registry.status();
    registry_ = *registry;
    absl::StatusOr<images_testing::RegistryImage> tiny = registry_.Image("tiny");
    ASSERT_TRUE(tiny.ok()) << tiny.status();
    tiny_ = *tiny;
  }

  // CreateImage `name`:1 in `token`'s tenant from `reference` with `password` (none when
  // empty) for the registry's user, then GetImage until it is pinned: FAILED_PRECONDITION with
  // its reason when the pin failed.
  grpc::Status CreateImage(const std::string& token, const std::string& name,
                           const std::string& reference, const std::string& password,
                           instancepb::Image* out = nullptr) {
    instancepb::CreateImageRequest req;
    req.mutable_image()->set_name(name);
    req.mutable_image()->set_version("1");
    req.mutable_image()->set_oci_reference(reference);
    if (!password.empty()) {
      req.mutable_registry_credentials()->set_username(registry_.username);
      req.mutable_registry_credentials()->set_password(password);
    }
    instancepb::Image made;
    return gpuaas::testing::CreateImageAndWait(
        stack_->images(), [&] { return PlatformStack::Ctx(token); }, req,
        out != nullptr ? *out : made);
  }

  // The tiny image's web server on 8080.
  static constexpr char kServe[] = "exec busybox httpd -f -p 8080 -h /opt/gpuaas/tiny";

  images_testing::TestRegistry registry_;
  images_testing::RegistryImage tiny_;
};

// The victim's own image, from the registry with its login, runs and serves its port. Mallory
// then registers an image naming the victim's pinned digest (which needs no registry at create)
// and starts it on the same node, whose layer cache holds the image: the agent asks the registry
// with mallory's own login (none) before lending its cache, and the pull fails unauthorized.
TEST_F(ContainerImageAttackTest, AnotherTenantCannotRunATenantsPrivateImageByItsDigest) {
  instancepb::Image image;
  grpc::Status s = CreateImage(victim_, "own", tiny_.tag_reference, registry_.password, &image);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(image.oci_digest_reference(), tiny_.digest_reference);
  const instancepb::Instance own = Run(victim_, "own", kServe, 8080, "own:1");
  ASSERT_EQ(own.ports_size(), 1);
  EXPECT_TRUE(NodeConnects("127.0.0.1", own.ports(0).host_port()));

  s = CreateImage(mallory_, "stolen", image.oci_digest_reference(), "");
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_TRUE(Create(mallory_, "stolen", kServe, 8080, "stolen:1").ok());
  const instancepb::Instance stolen = stack_->WaitInstance(mallory_, "stolen", Failed);
  EXPECT_EQ(stolen.reason(), instancepb::REASON_IMAGE_PULL_FAILED) << stolen.DebugString();
  EXPECT_TRUE(absl::StrContains(absl::AsciiStrToLower(stolen.message()), "unauthorized"))
      << stolen.message();
  // The victim's instance is untouched.
  EXPECT_TRUE(Running(stack_->WaitInstance(victim_, "own", Running)));
}

// Mallory's own registry, which answers a request for any manifest with the bytes of the
// manifest `upstream_path` names on the open registry (an image of mallory's own, public), and
// claims them as the digest asked for. Each request's path goes to `requests`.
constexpr char kLyingRegistry[] = R"(
import http.server, sys, urllib.request
port, upstream, requests = int(sys.argv[1]), sys.argv[2], sys.argv[3]
accept = ", ".join(["application/vnd.oci.image.index.v1+json",
                    "application/vnd.oci.image.manifest.v1+json",
                    "application/vnd.docker.distribution.manifest.list.v2+json",
                    "application/vnd.docker.distribution.manifest.v2+json"])
with urllib.request.urlopen(urllib.request.Request(upstream, headers={"Accept": accept})) as r:
    manifest, media_type = r.read(), r.headers["Content-Type"]

class Liar(http.server.BaseHTTPRequestHandler):
    def answer(self, body):
        with open(requests, "a") as f:
            f.write(self.command + " " + self.path + "\n")
        if self.path.rstrip("/") == "/v2":
            self.reply(200, b"{}", "application/json")
        elif "/manifests/" in self.path:
            self.reply(200, manifest, media_type, self.path.rsplit("/", 1)[1], body)
        else:
            self.reply(404, b"{}", "application/json")
    def reply(self, code, data, media_type, digest=None, body=True):
        self.send_response(code)
        self.send_header("Content-Type", media_type)
        self.send_header("Content-Length", str(len(data)))
        if digest:
            self.send_header("Docker-Content-Digest", digest)
        self.end_headers()
        if body:
            self.wfile.write(data)
    def do_GET(self):
        self.answer(True)
    def do_HEAD(self):
        self.answer(False)
    def log_message(self, *args):
        pass

http.server.ThreadingHTTPServer(("127.0.0.1", port), Liar).serve_forever()
)";

// Mallory names the victim's pinned digest on a registry of mallory's own, which vouches for it:
// it serves the manifest of mallory's public image (another digest) for any reference, with the
// digest asked for in its headers. The agent hashes what the registry served before lending its
// cache, so the instance fails and never runs the victim's image; the victim's runs on.
TEST_F(ContainerImageAttackTest, ATenantsOwnRegistryCannotVouchForAnotherTenantsPrivateImage) {
  instancepb::Image image;
  grpc::Status s = CreateImage(victim_, "own", tiny_.tag_reference, registry_.password, &image);
  ASSERT_TRUE(s.ok()) << s.error_message();
  const instancepb::Instance own = Run(victim_, "own", kServe, 8080, "own:1");
  ASSERT_EQ(own.ports_size(), 1);

  absl::StatusOr<images_testing::TestRegistry> open = images_testing::OpenTestRegistry();
  ASSERT_TRUE(open.ok()) << open.status();
  absl::StatusOr<images_testing::RegistryImage> public_image = open->Image("webui-demo");
  ASSERT_TRUE(public_image.ok()) << public_image.status();
  ASSERT_NE(public_image->digest, tiny_.digest);
  const std::string& ref = public_image->digest_reference;
  const size_t at = ref.find('@');
  const std::string upstream =
      absl::StrCat("http://", open->address, "/v2/",
                   ref.substr(open->address.size() + 1, at - open->address.size() - 1),
                   "/manifests/", ref.substr(at + 1));
  const int port = mallorys_registry_port_;
  const fs::path script = dir_.path() / "lying_registry.py";
  const fs::path requests = dir_.path() / "lying_registry.requests";
  std::ofstream(script) << kLyingRegistry;
  gpuaas::testing::ChildProcess liar(
      {"/usr/bin/python3", script.string(), std::to_string(port), upstream, requests.string()},
      (dir_.path() / "lying_registry.log").string());
  ASSERT_TRUE(Eventually([&] { return NodeConnects("127.0.0.1", port); }, absl::Seconds(10)))
      << Shell("cat " + (dir_.path() / "lying_registry.log").string());

  const std::string victims_digest =
      image.oci_digest_reference().substr(image.oci_digest_reference().find('@'));
  s = CreateImage(mallory_, "vouched",
                  absl::StrCat("127.0.0.1:", port, "/gpuaas/tiny", victims_digest), "");
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_TRUE(Create(mallory_, "vouched", kServe, 8080, "vouched:1").ok());
  // Settled either way: running would be the victim's image, from the node's cache.
  const instancepb::Instance vouched = stack_->WaitInstance(
      mallory_, "vouched", [](const instancepb::Instance& i) { return Failed(i) || Running(i); });
  ASSERT_TRUE(Failed(vouched)) << vouched.DebugString();
  EXPECT_EQ(vouched.reason(), instancepb::REASON_IMAGE_PULL_FAILED) << vouched.DebugString();
  EXPECT_TRUE(absl::StrContains(vouched.message(), "not that digest")) << vouched.message();
  // The agent did ask mallory's registry, which answered: the digest check refused it.
  EXPECT_TRUE(absl::StrContains(Shell("cat " + requests.string()),
                                "/manifests/" + victims_digest.substr(1)))
      << Shell("cat " + requests.string());
  // The victim's instance is untouched and still serves.
  EXPECT_TRUE(Running(stack_->WaitInstance(victim_, "own", Running)));
  EXPECT_TRUE(NodeConnects("127.0.0.1", own.ports(0).host_port()));
}

// A wrong digest fails at the agent's pull (IMAGE_PULL_FAILED, not found); a missing tag and a
// wrong password fail the image's pin (FAILED, with the reason).
TEST_F(ContainerImageAttackTest, AWrongDigestAMissingTagAndAWrongPasswordEachGiveTheirReason) {
  const std::string repository = tiny_.digest_reference.substr(0, tiny_.digest_reference.find('@'));
  grpc::Status s =
      CreateImage(victim_, "wrong-digest",
                  absl::StrCat(repository, "@sha256:", std::string(64, '0')), registry_.password);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_TRUE(Create(victim_, "wrong-digest", kServe, 8080, "wrong-digest:1").ok());
  const instancepb::Instance wrong = stack_->WaitInstance(victim_, "wrong-digest", Failed);
  EXPECT_EQ(wrong.reason(), instancepb::REASON_IMAGE_PULL_FAILED) << wrong.DebugString();
  const std::string message = absl::AsciiStrToLower(wrong.message());
  EXPECT_TRUE(absl::StrContains(message, "not found") ||
              absl::StrContains(message, "digest mismatch"))
      << wrong.message();

  s = CreateImage(victim_, "missing-tag", repository + ":no-such-tag", registry_.password);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
  EXPECT_TRUE(absl::StrContains(s.error_message(), "not found")) << s.error_message();

  s = CreateImage(victim_, "wrong-password", tiny_.tag_reference, registry_.password + "x");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
  EXPECT_TRUE(absl::StrContains(s.error_message(), "registry_credentials")) << s.error_message();

  // The same image by its tag with the right login is pinned and runs.
  s = CreateImage(victim_, "right", tiny_.tag_reference, registry_.password);
  ASSERT_TRUE(s.ok()) << s.error_message();
  Run(victim_, "right", kServe, 8080, "right:1");
}

}  // namespace
}  // namespace gpuaas::platform_testing
