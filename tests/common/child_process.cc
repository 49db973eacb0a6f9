#include "tests/common/child_process.h"

#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "grpc/health/v1/health.grpc.pb.h"

namespace gpuaas::testing {

namespace {

// Claims `port` for this test process's life among every test process on the machine: a lock
// on /tmp/gpuaas-test-ports/PORT, held until the process exits (the kernel drops it then). Two
// tests running side by side (ctest -j) otherwise both saw one port free and both started a
// server on it; the second failed with "Address already in use".
bool ClaimForThisProcess(int port) {
  constexpr const char* kDir = "/tmp/gpuaas-test-ports";
  mkdir(kDir, 01777);
  const std::string path = std::string(kDir) + "/" + std::to_string(port);
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) return true;  // no lock to be had: the bind check alone, as before
  if (flock(fd, LOCK_EX | LOCK_NB) == 0) return true;  // fd stays open: the claim stays
  close(fd);
  return false;
}

// Whether nothing on loopback holds `port` now.
bool Bindable(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return ok;
}

// A test that starts servers dies with whatever runs it (ctest killed, a cancelled run), and
// the servers with it (their own PR_SET_PDEATHSIG, below). Set on the main thread, which
// lives as long as the test.
[[maybe_unused]] const bool kDiesWithItsRunner = [] {
  return prctl(PR_SET_PDEATHSIG, SIGKILL) == 0;
}();

// Forks on one thread that never ends, so that the children's PR_SET_PDEATHSIG fires when the
// process dies and not when a short-lived test thread that started one (a drill's restart) ends.
class Spawner {
 public:
  static Spawner& Get() {
    static Spawner* spawner = new Spawner();  // never destroyed: its thread outlives main
    return *spawner;
  }

  // Runs `fork_child` (which forks and returns the pid) on the spawner's thread.
  pid_t Run(std::function<pid_t()> fork_child) {
    std::unique_lock<std::mutex> lock(mu_);
    const uint64_t ticket = ++submitted_;
    jobs_.emplace(ticket, std::move(fork_child));
    wake_.notify_all();
    done_.wait(lock, [&] { return results_.count(ticket) > 0; });
    const pid_t pid = results_[ticket];
    results_.erase(ticket);
    return pid;
  }

 private:
  Spawner() {
    std::thread([this] { Loop(); }).detach();
  }

  void Loop() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      wake_.wait(lock, [&] { return !jobs_.empty(); });
      auto job = jobs_.extract(jobs_.begin());
      lock.unlock();
      const pid_t pid = job.mapped()();
      lock.lock();
      results_[job.key()] = pid;
      done_.notify_all();
    }
  }

  std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable done_;
  uint64_t submitted_ = 0;
  std::map<uint64_t, std::function<pid_t()>> jobs_;
  std::map<uint64_t, pid_t> results_;
};

}  // namespace

// Below the kernel's ephemeral range: a port the kernel handed out (bind to 0) can be taken,
// between here and the child's bind, as the local port of any outgoing connection on the
// machine (a PostgreSQL or Ceph client of a test beside this one), and then the child cannot
// listen. From 23000: the agents hand workloads 20000-22999.
int FreePort() {
  int low = 32768;
  if (std::FILE* range = std::fopen("/proc/sys/net/ipv4/ip_local_port_range", "r")) {
    if (std::fscanf(range, "%d", &low) != 1) low = 32768;
    std::fclose(range);
  }
  static std::mutex mu;
  static std::mt19937 random(std::random_device{}());
  std::lock_guard<std::mutex> lock(mu);
  if (low > 23000 + 100) {
    std::uniform_int_distribution<int> pick(23000, low - 1);
    for (int i = 0; i < 200; ++i) {
      const int port = pick(random);
      if (Bindable(port) && ClaimForThisProcess(port)) return port;
    }
  }
  // No room below the range (or all taken): one the kernel picks.
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

int ReservePortBlock(int slot) {
  constexpr int kFirst = 10000, kBlocks = 100, kSize = 100;
  static std::mutex mu;
  static std::mt19937 random(std::random_device{}());
  static std::map<int, int> held;  // slot → first port
  std::lock_guard<std::mutex> guard(mu);
  if (auto it = held.find(slot); it != held.end()) return it->second;
  const int start = static_cast<int>(random() % kBlocks);
  for (int i = 0; i < kBlocks; ++i) {
    const int first = kFirst + ((start + i) % kBlocks) * kSize;
    const std::string lock = "/tmp/gpuaas-test-port-block-" + std::to_string(first) + ".lock";
    const int fd = open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) continue;
    // An flock is held per open file, so this process's next call finds it taken too; the
    // descriptor stays open (and the block ours) until the process exits.
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) return held[slot] = first;
    close(fd);
  }
  std::fprintf(stderr, "every block of 100 ports in 10000-19999 is held by another test\n");
  return kFirst;
}

ChildProcess::ChildProcess(std::vector<std::string> argv, const std::string& log_file) {
  std::vector<char*> args;
  for (std::string& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  const pid_t parent = getpid();
  pid_ = Spawner::Get().Run([&] {
    const pid_t pid = fork();
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(127);  // the test died before the line above
      int fd = open(log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (fd >= 0) {
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
      }
      execv(args[0], args.data());
      _exit(127);
    }
    return pid;
  });
}

ChildProcess::~ChildProcess() {
  if (Running()) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

bool ChildProcess::Running() {
  if (pid_ <= 0 || exit_status_ != -1) return false;
  int status = 0;
  pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == 0) return true;
  exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return false;
}

std::string ChildProcess::Describe() {
  if (Running()) return "still running, pid " + std::to_string(pid_);
  if (exit_status_ > 128) return "killed by signal " + std::to_string(exit_status_ - 128);
  return "exited with status " + std::to_string(exit_status_);
}

int ChildProcess::Terminate(int timeout_ms) {
  if (!Running()) return exit_status_;
  kill(pid_, SIGTERM);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    if (!Running()) return exit_status_;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  exit_status_ = -1;
  pid_ = -1;
  return -1;
}

bool WaitServing(const std::string& address, int timeout_ms) {
  // A channel of its own for each attempt: one channel would wait 1 s, then 1.6 s, 2.56 s...
  // between attempts to connect (gRPC's backoff, kept by the process-wide subchannel pool), and
  // see a process that listens a moment after the first attempt about 5 s late.
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    auto stub = grpc::health::v1::Health::NewStub(
        grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args));
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
    grpc::health::v1::HealthCheckResponse resp;
    if (stub->Check(&ctx, {}, &resp).ok() &&
        resp.status() == grpc::health::v1::HealthCheckResponse::SERVING) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

}  // namespace gpuaas::testing
