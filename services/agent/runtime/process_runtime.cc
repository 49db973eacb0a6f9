// The process runtime (process_runtime.h). Each workload has a directory under the root:
//   workload.pb   the Workload as received        ports   "<port> <host port>" lines
//   uid           the uid (and gid) it runs as, when each workload has its own
//   state         "<state> <reason> <exit code>" and a message line, after every change
//   shim, stopping, exit, stdout.log, stderr.log  written by the shim (shim_files.h)
//   home/         the workload's private home
//   image, bundle/, rootfs/, lower/, disk/, mounts/, netns  a container's (container_launch.h)
// and the root's `tenant-gids` keeps each tenant's group (tenant_groups.h),
// so a runtime made after an agent restart rebuilds what it knew and adopts running shims.
// One loop thread waits on an epoll set of the shims' pidfds: an idle node costs nothing per
// workload; only workloads still starting are looked at (and probed) every probe interval.
#include "services/agent/runtime/process_runtime.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "libs/common/held_port.h"
#include "libs/common/logging.h"
#include "libs/common/proto_time.h"
#include "libs/common/status_macros.h"
#include "services/agent/runtime/container_rootfs.h"
#include "services/agent/runtime/landlock.h"
#include "services/agent/runtime/mount_source.h"
#include "services/agent/runtime/probe.h"
#include "services/agent/runtime/sandbox.h"
#include "services/agent/runtime/shim_files.h"
#include "services/agent/runtime/tenant_groups.h"

namespace gpuaas::agent {
namespace {

namespace fs = std::filesystem;
namespace pb = ::gpuaas::instance::v1;

constexpr absl::Duration kDefaultProbeTimeout = absl::Minutes(5);
constexpr absl::Duration kDefaultGrace = absl::Seconds(10);
// A shim that has not recorded itself this long after its start is taken for dead.
constexpr absl::Duration kShimStartGrace = absl::Seconds(5);

absl::Duration FromProto(const google::protobuf::Duration& d) {
  return absl::Seconds(d.seconds()) + absl::Nanoseconds(d.nanos());
}

bool Finished(pb::WorkloadState s) {
  return s == pb::WORKLOAD_STATE_EXITED || s == pb::WORKLOAD_STATE_STOPPED ||
         s == pb::WORKLOAD_STATE_FAILED;
}

// A container's host ports, bound (never listened on) for as long as its shim lives, once its
// network forwards them (which checked they were free): the node forwards them into the
// container (veth), and while they are held no other program on the node can bind one and find
// its clients forwarded to a workload.
void ReserveHostPorts(const std::map<int, int>& host_ports, std::vector<int>& fds) {
  for (const auto& [port, host] : host_ports) {
    if (UniqueFd held = HoldTcpPort(host); held.valid()) fds.push_back(held.Release());
  }
}

// Workload ids name directories: "<instance_id>.<run>", nothing that could climb out.
bool SafeId(const std::string& id) {
  if (id.empty() || id.size() > 200 || id == "." || id == "..") return false;
  for (char c : id) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_')) {
      return false;
    }
  }
  return true;
}

// The last line of a file, for a message.
std::string LastLine(const fs::path& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line)) {
    if (!line.empty()) last = line;
  }
  return last.substr(0, 512);
}

// Hands `path` to uid:gid where another user owns it.
void GiveTo(const fs::path& path, uid_t uid, gid_t gid) {
  struct stat st;
  if (lstat(path.c_str(), &st) == 0 && st.st_uid != uid) (void)!lchown(path.c_str(), uid, gid);
}

// Open mount sources on their way to the shim: in the child they become descriptors 3, 4, ...
// (which exec keeps), in order; the agent's copies close with this object.
struct MountFds {
  std::vector<int> fds;

  MountFds() = default;
  MountFds(const MountFds&) = delete;
  MountFds& operator=(const MountFds&) = delete;
  ~MountFds() {
    for (int fd : fds) close(fd);
  }
  // The numbers the child will see.
  std::vector<int> InChild() const {
    std::vector<int> numbers;
    for (size_t i = 0; i < fds.size(); ++i) numbers.push_back(3 + static_cast<int>(i));
    return numbers;
  }
  // Before the fork: every descriptor above the numbers the child will use, so no move in
  // the child overwrites a source (and the child need not allocate).
  void LiftAboveTargets() {
    const int n = static_cast<int>(fds.size());
    for (int& fd : fds) {
      if (fd >= 3 + n) continue;
      const int high = fcntl(fd, F_DUPFD_CLOEXEC, 3 + n);
      close(fd);
      fd = high;
    }
  }
  // In the forked child only.
  void MoveForChild() const {
    for (size_t i = 0; i < fds.size(); ++i) {
      dup2(fds[i], 3 + static_cast<int>(i));  // dup2 clears close-on-exec
    }
  }
};

// bwrap binds as the workload's user: every directory above `path` must let it through.
absl::Status Reachable(const fs::path& path, uid_t uid, gid_t gid) {
  for (fs::path p = path.parent_path(); !p.empty() && p != p.root_path(); p = p.parent_path()) {
    struct stat st;
    if (stat(p.c_str(), &st) != 0) continue;
    const bool through = (st.st_uid == uid && (st.st_mode & S_IXUSR)) ||
                         (st.st_gid == gid && (st.st_mode & S_IXGRP)) || (st.st_mode & S_IXOTH);
    if (!through) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "%s cannot be mounted: the workloads' user (uid %d) cannot enter %s (mode %o); keep "
          "storages and the workload root under directories others may traverse",
          path.string(), uid, p.string(), st.st_mode & 07777));
    }
  }
  return absl::OkStatus();
}

bool PortFree(int port) { return HoldTcpPort(port).valid(); }

// A process descriptor (pidfd) of a workload's shim: readable once the shim has exited, so the
// loop waits on one epoll set for every exit instead of reading each workload's files per tick.
// Outlives the workload's entry when a finished workload is removed while its shim still winds
// down, so the shim is still reaped.
struct WatchedShim {
  std::string workload_id;
  pid_t pid = -1;
  bool own_child = false;  // ours to reap
};

struct Entry {
  pb::Workload workload;
  fs::path dir;
  bool container = false;  // runs from its image (an OCI container)
  std::map<int, int> host_ports;
  uid_t uid = 0;  // and gid
  pb::WorkloadState state = pb::WORKLOAD_STATE_UNSPECIFIED;
  pb::Reason reason = pb::REASON_UNSPECIFIED;
  std::string message;
  int exit_code = 0;
  absl::Time state_time;
  absl::Time started;
  pid_t shim = -1;
  int pidfd = -1;          // in the epoll set while >= 0
  bool spawning = false;   // Start is forking it, outside the lock: not listed yet
  bool preparing = false;  // a container being pulled and prepared (PULLING): listed
  bool own_child = false;  // ours to reap
  bool stop_sent = false;
  bool shim_gone = false;  // its pidfd fired: the shim has exited
  bool released = false;   // a container's mounts and network are down
};

// What the loop looks at for one workload, gathered under the lock, observed outside it (file
// reads, probes), and applied under the lock again.
struct Look {
  std::string id;
  std::string dir;
  bool shim_gone = false;
  bool probe_timed_out = false;
  // The probe port, copied: a stopped entry may be removed while the probe runs.
  std::optional<pb::Port> probe;
  int probe_host_port = 0;
  std::string probe_address;
  // Observed:
  std::optional<WorkloadExit> exit;
  bool live = false;
  bool probe_passed = false;
  bool container = false;
  // A finished container whose mounts and network are still up (a stop found its shim on its
  // way out and marked it STOPPED before its exit was seen): only to release.
  bool release_only = false;
  bool released = false;
};

class ProcessRuntime final : public Runtime {
 public:
  ProcessRuntime(ProcessRuntimeOptions options, uid_t uid, gid_t gid)
      : options_(std::move(options)),
        uid_(uid),
        gid_(gid),
        tenant_groups_(
            options_.first_gid == 0
                ? nullptr
                : std::make_unique<TenantGroups>((fs::path(options_.root) / "tenant-gids").string(),
                                                 options_.first_gid, options_.last_gid)),
        root_links_(ReadRootLinks()),
        epoll_fd_(epoll_create1(EPOLL_CLOEXEC)),
        wake_fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = wake_fd_;
    epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev);
  }

  ~ProcessRuntime() override {
    stopping_.Notify();
    WakeLoop();
    if (loop_.joinable()) loop_.join();
    for (std::thread& t : TakePreparers()) t.join();
    for (const auto& [fd, shim] : watched_) close(fd);
    close(wake_fd_);
    close(epoll_fd_);
  }

  void Adopt();
  void StartLoop() {
    loop_ = std::thread([this] { Loop(); });
  }

  absl::Status Start(const pb::Workload& workload) override;
  absl::Status Stop(std::string_view workload_id) override;
  absl::Status Remove(std::string_view workload_id) override;
  std::vector<pb::WorkloadStatus> List() const override;
  void OnChange(std::function<void()> changed) override {
    absl::MutexLock lock(&mu_);
    on_change_ = std::move(changed);
  }

 private:
  // Everything a start does that may block (files, the storage's ownership, fork): outside
  // the lock, so starts never hold up List, Stop or the loop. Returns the shim's pid.
  absl::StatusOr<pid_t> Spawn(const pb::Workload& workload, const fs::path& dir,
                              const std::map<int, int>& host_ports, uid_t uid, gid_t gid) const;
  // A container's start, on a thread of its own: pull, prepare, spawn its shim.
  void StartContainer(pb::Workload workload, fs::path dir, std::map<int, int> host_ports,
                      uid_t id_base);
  // Forks the shim with `args` (after its path) and `env`, passing `fds` as 3, 4, ...
  absl::StatusOr<pid_t> ForkShim(std::vector<std::string> args, std::vector<std::string> env,
                                 struct MountFds* fds) const;
  // What Start does once the shim runs (or could not be started).
  void Started(const std::string& id, const absl::StatusOr<pid_t>& shim, pb::Reason failure);
  bool StoppedWhilePreparing(const std::string& id) {
    absl::MutexLock lock(&mu_);
    auto it = entries_.find(id);
    return it != entries_.end() && it->second.stop_sent;
  }
  // The least container id block no workload holds.
  absl::StatusOr<uid_t> AllocateIdBlock() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::vector<std::thread> TakePreparers() {
    absl::MutexLock lock(&mu_);
    return std::move(preparers_);
  }
  absl::StatusOr<std::map<int, int>> AllocatePorts(const pb::Workload& w)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The least uid of the range no workload directory holds, or the shared uid without a range.
  absl::StatusOr<uid_t> AllocateUid() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The group a workload running as `uid` runs in: its tenant's with a gid range, else its uid's
  // (or the shared user's).
  absl::StatusOr<gid_t> GroupOf(const pb::Workload& w, uid_t uid) const;
  void SetState(Entry& e, pb::WorkloadState state, pb::Reason reason, std::string message)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Persist(const Entry& e) const;
  void SendStop(Entry& e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Puts the shim's pidfd in the epoll set; without a pidfd the periodic sweep finds its exit.
  void Watch(Entry& e, bool own_child) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A watched shim exited: reap it if it is ours, and mark its workload for a look.
  void ShimExited(int pidfd) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Notify();
  void WakeLoop() const;
  void Loop();
  // One round over the shims that exited, the workloads still starting (probes) and, when
  // `sweep`, every live workload. Returns whether any workload is still starting.
  bool Tick(const std::vector<int>& exited_pidfds, bool sweep);
  void Apply(Look& look) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const ProcessRuntimeOptions options_;
  const uid_t uid_;
  const gid_t gid_;
  const std::unique_ptr<TenantGroups> tenant_groups_;  // null without a gid range
  const std::map<std::string, std::string> root_links_;
  const int epoll_fd_;
  const int wake_fd_;
  absl::Notification stopping_;
  std::thread loop_;

  mutable absl::Mutex mu_;
  std::map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);
  std::map<int, WatchedShim> watched_ ABSL_GUARDED_BY(mu_);  // by pidfd
  std::function<void()> on_change_ ABSL_GUARDED_BY(mu_);
  int next_port_ ABSL_GUARDED_BY(mu_) = 0;
  bool changed_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> preparers_ ABSL_GUARDED_BY(mu_);  // StartContainer threads
};

// A safety net for shims without a pidfd (pidfd_open refused): their exits are found this late.
constexpr absl::Duration kSweepEvery = absl::Seconds(5);

void ProcessRuntime::Notify() {
  std::function<void()> f;
  {
    absl::MutexLock lock(&mu_);
    if (!changed_) return;
    changed_ = false;
    f = on_change_;
  }
  if (f) f();
}

void ProcessRuntime::WakeLoop() const {
  const uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof one);
}

void ProcessRuntime::SetState(Entry& e, pb::WorkloadState state, pb::Reason reason,
                              std::string message) {
  if (e.state == state && e.reason == reason && e.message == message) return;
  e.state = state;
  e.reason = reason;
  e.message = std::move(message);
  e.state_time = absl::Now();
  Persist(e);
  changed_ = true;
}

void ProcessRuntime::Persist(const Entry& e) const {
  const fs::path tmp = e.dir / "state.tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << static_cast<int>(e.state) << " " << static_cast<int>(e.reason) << " " << e.exit_code
        << " " << absl::ToUnixMillis(e.state_time) << "\n"
        << e.message << "\n";
  }
  std::error_code ec;
  fs::rename(tmp, e.dir / "state", ec);
}

void ProcessRuntime::Watch(Entry& e, bool own_child) {
  // glibc 2.36's <sys/pidfd.h> declares pidfd_open without C linkage: the system call itself.
  const int fd = static_cast<int>(syscall(SYS_pidfd_open, e.shim, 0));
  if (fd < 0) return;
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = fd;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
    close(fd);
    return;
  }
  e.pidfd = fd;
  watched_[fd] = {.workload_id = e.workload.workload_id(), .pid = e.shim, .own_child = own_child};
}

void ProcessRuntime::ShimExited(int pidfd) {
  auto it = watched_.find(pidfd);
  if (it == watched_.end()) return;
  const WatchedShim shim = it->second;
  watched_.erase(it);
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, pidfd, nullptr);
  close(pidfd);
  if (shim.own_child) waitpid(shim.pid, nullptr, WNOHANG);
  auto entry = entries_.find(shim.workload_id);
  if (entry == entries_.end() || entry->second.pidfd != pidfd) return;
  Entry& e = entry->second;
  e.pidfd = -1;
  e.own_child = false;
  e.shim_gone = true;
}

absl::StatusOr<std::map<int, int>> ProcessRuntime::AllocatePorts(const pb::Workload& w) {
  std::set<int> taken;
  for (const auto& [id, e] : entries_) {
    // A finished workload whose shim is gone listens on nothing: its ports are free again,
    // though its entry (and logs) stay for --keep-finished.
    if (Finished(e.state) && e.pidfd < 0) continue;
    for (const auto& [port, host] : e.host_ports) taken.insert(host);
  }
  const int span = options_.last_port - options_.first_port + 1;
  std::map<int, int> out;
  for (const pb::Port& p : w.ports()) {
    bool found = false;
    for (int tries = 0; tries < span && !found; ++tries) {
      const int candidate = options_.first_port + (next_port_++ % span);
      if (taken.count(candidate) || !PortFree(candidate)) continue;
      taken.insert(candidate);
      out[p.port()] = candidate;
      found = true;
    }
    if (!found) {
      return absl::ResourceExhaustedError(
          absl::StrCat("no free host port in ", options_.first_port, "-", options_.last_port));
    }
  }
  return out;
}

absl::StatusOr<uid_t> ProcessRuntime::AllocateUid() const {
  if (options_.first_uid == 0 || geteuid() != 0) return uid_;
  std::set<uid_t> taken;
  for (const auto& [id, e] : entries_) {
    if (!e.container) taken.insert(e.uid);
  }
  for (uid_t uid = options_.first_uid; uid <= options_.last_uid; ++uid) {
    if (taken.count(uid) == 0) return uid;
  }
  return absl::ResourceExhaustedError(
      absl::StrCat("no free workload uid in ", options_.first_uid, "-", options_.last_uid));
}

absl::StatusOr<uid_t> ProcessRuntime::AllocateIdBlock() const {
  const ContainerOptions& c = options_.containers;
  std::set<uid_t> taken;
  for (const auto& [id, e] : entries_) {
    if (e.container) taken.insert(e.uid);
  }
  for (uint32_t block = 0; block < c.id_blocks; ++block) {
    const uid_t base = c.first_id + block * kContainerIds;
    if (taken.count(base) == 0) return base;
  }
  return absl::ResourceExhaustedError(
      absl::StrCat("all ", c.id_blocks, " container id blocks are taken"));
}

absl::StatusOr<gid_t> ProcessRuntime::GroupOf(const pb::Workload& w, uid_t uid) const {
  if (uid == uid_) return gid_;
  if (tenant_groups_ == nullptr) return uid;
  return tenant_groups_->GidOf(w.tenant_id());
}

absl::StatusOr<pid_t> ProcessRuntime::Spawn(const pb::Workload& workload, const fs::path& dir,
                                            const std::map<int, int>& host_ports, uid_t uid,
                                            gid_t gid) const {
  std::error_code ec;
  fs::create_directories(dir / "home", ec);
  if (ec)
    return absl::InternalError(absl::StrCat("cannot make ", dir.string(), ": ", ec.message()));
  chmod(dir.c_str(), 0711);  // the shim's files stay root's; home is the workload's alone
  GiveTo(dir / "home", uid, gid);
  chmod((dir / "home").c_str(), 0700);
  std::ofstream(dir / "uid", std::ios::trunc) << uid << "\n";
  {
    std::ofstream out(dir / "workload.pb", std::ios::binary | std::ios::trunc);
    workload.SerializeToOstream(&out);
  }
  chmod((dir / "workload.pb").c_str(), 0600);  // its envs may hold the tenant's secrets
  {
    std::ofstream out(dir / "ports", std::ios::trunc);
    for (const auto& [port, host] : host_ports) out << port << " " << host << "\n";
  }
  // The mounts as descriptors the shim and bwrap inherit (mount_source.h); closed here once the
  // shim has its copies.
  MountFds mount_fds;
  for (const pb::Mount& m : workload.mounts()) {
    absl::StatusOr<int> fd = OpenMountSource(m.host_path(), m.sub_path(), uid, gid);
    if (!fd.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat("mount ", m.mount_path(), ": ", fd.status().message()));
    }
    mount_fds.fds.push_back(*fd);
    // The tree becomes (or stays) its group's, so every workload of the tenant writes there,
    // files the S3 data plane wrote included, and nobody else reads.
    if (!m.read_only() && geteuid() == 0) ShareTreeWith(*fd, gid);
  }
  const Launch launch = BuildLaunch({.workload = &workload,
                                     .host_ports = host_ports,
                                     .home = (dir / "home").string(),
                                     .gpu_minor = options_.gpu_minor,
                                     .root_links = root_links_,
                                     .mount_fds = mount_fds.InChild()});
  const absl::Duration grace =
      workload.has_stop_grace_period() ? FromProto(workload.stop_grace_period()) : kDefaultGrace;
  std::vector<std::string> args = {options_.shim_path,
                                   "--dir",
                                   dir.string(),
                                   "--bwrap",
                                   options_.bwrap_path,
                                   "--uid",
                                   std::to_string(uid),
                                   "--gid",
                                   std::to_string(gid),
                                   "--log-limit",
                                   std::to_string(options_.log_limit_bytes),
                                   "--grace-ms",
                                   std::to_string(absl::ToInt64Milliseconds(grace)),
                                   "--port-range",
                                   absl::StrCat(options_.first_port, "-", options_.last_port)};
  if (!host_ports.empty()) {
    std::vector<int> own;
    for (const auto& [port, host] : host_ports) own.push_back(host);
    args.insert(args.end(), {"--own-ports", absl::StrJoin(own, ",")});
  }
  for (const BindSource& b : launch.binds) {
    GPUAAS_RETURN_IF_ERROR(Reachable(b.host_path, uid, gid));
  }
  args.push_back("--");
  args.insert(args.end(), launch.bwrap_args.begin(), launch.bwrap_args.end());
  return ForkShim(std::move(args), launch.env, &mount_fds);
}

absl::StatusOr<pid_t> ProcessRuntime::ForkShim(std::vector<std::string> args,
                                               std::vector<std::string> env,
                                               MountFds* mount_fds) const {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (std::string& v : env) envp.push_back(v.data());
  envp.push_back(nullptr);

  if (mount_fds != nullptr) mount_fds->LiftAboveTargets();
  const size_t passed = mount_fds != nullptr ? mount_fds->fds.size() : 0;
  const pid_t pid = fork();
  if (pid < 0) return absl::InternalError(absl::StrCat("fork: ", strerror(errno)));
  if (pid == 0) {
    // Its own session, so nothing aimed at the agent's group reaches it, and none of the
    // agent's descriptors. A mask survives exec: only the stop signals stay blocked, so a stop
    // sent before the shim's handlers are in place waits for them (the shim unblocks them)
    // instead of killing it before it could stop its workload and record the exit.
    setsid();
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    sigprocmask(SIG_SETMASK, &stop, nullptr);
    if (mount_fds != nullptr) mount_fds->MoveForChild();
    close_range(3 + static_cast<unsigned>(passed), ~0U, 0);
    const int null = open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(null, 1);
    dup2(null, 2);
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  return pid;
}

absl::Status ProcessRuntime::Start(const pb::Workload& workload) {
  const std::string& id = workload.workload_id();
  const bool container =
      !workload.image_reference().empty() ||
      (options_.containers.images != nullptr && options_.containers.system_image_workloads);
  fs::path dir;
  absl::StatusOr<std::map<int, int>> ports;
  absl::StatusOr<uid_t> uid;
  {
    absl::MutexLock lock(&mu_);
    if (entries_.count(id)) return absl::OkStatus();
    if (!SafeId(id)) {
      return absl::InvalidArgumentError(
          absl::StrCat("workload_id: \"", id, "\" is not a safe name"));
    }
    Entry& e = entries_[id];
    e.workload = workload;
    e.dir = dir = fs::path(options_.root) / id;
    e.container = container;
    e.spawning = true;
    ports = AllocatePorts(workload);
    if (ports.ok()) e.host_ports = *ports;
    if (container && options_.containers.images == nullptr) {
      uid = absl::FailedPreconditionError("this node runs no container images");
    } else {
      uid = container ? AllocateIdBlock() : AllocateUid();
    }
    if (uid.ok()) e.uid = *uid;
    if (container && ports.ok() && uid.ok()) {
      // Listed (PULLING) at once; the pull and the rest go on on a thread of their own.
      e.spawning = false;
      e.preparing = true;
      e.started = absl::Now();
      std::error_code ec;
      fs::create_directories(dir, ec);
      std::ofstream(dir / "container") << "1\n";  // for Adopt: it has mounts to take down
      // PULLING while its image comes (the instance service turns the progress into events);
      // a workload without one only has its mounts to wait for.
      SetState(e,
               workload.image_reference().empty() ? pb::WORKLOAD_STATE_STARTED
                                                  : pb::WORKLOAD_STATE_PULLING,
               pb::REASON_UNSPECIFIED, "");
      preparers_.emplace_back([this, workload, dir, p = *ports, base = *uid] {
        StartContainer(workload, dir, p, base);
      });
    }
  }
  if (container && ports.ok() && uid.ok()) {
    Notify();
    return absl::OkStatus();
  }
  const absl::StatusOr<gid_t> gid = uid.ok() ? GroupOf(workload, *uid) : uid.status();
  absl::StatusOr<pid_t> shim = !ports.ok() ? ports.status()
                               : !gid.ok() ? gid.status()
                                           : Spawn(workload, dir, *ports, *uid, *gid);
  Started(id, shim, pb::REASON_START_ERROR);
  return shim.status();
}

void ProcessRuntime::StartContainer(pb::Workload workload, fs::path dir,
                                    std::map<int, int> host_ports, uid_t id_base) {
  const std::string id = workload.workload_id();
  absl::StatusOr<gid_t> tenant_gid =
      tenant_groups_ != nullptr ? tenant_groups_->GidOf(workload.tenant_id()) : gid_t{0};
  bool pull_failed = false;
  absl::StatusOr<pid_t> shim = absl::UnknownError("not started");
  if (!tenant_gid.ok()) {
    shim = tenant_gid.status();
  } else {
    // Traversable by the container's root (runc binds the root file system as it).
    chmod(dir.c_str(), 0711);
    std::ofstream(dir / "uid", std::ios::trunc) << id_base << "\n";
    {
      std::ofstream out(dir / "workload.pb", std::ios::binary | std::ios::trunc);
      workload.SerializeToOstream(&out);
    }
    chmod((dir / "workload.pb").c_str(), 0600);  // its envs and registry login are secrets
    {
      std::ofstream out(dir / "ports", std::ios::trunc);
      for (const auto& [port, host] : host_ports) out << port << " " << host << "\n";
    }
    auto progress = [this, &id](const std::string& message) {
      {
        absl::MutexLock lock(&mu_);
        auto it = entries_.find(id);
        if (it == entries_.end() || it->second.state != pb::WORKLOAD_STATE_PULLING) return;
        SetState(it->second, pb::WORKLOAD_STATE_PULLING, pb::REASON_UNSPECIFIED, message);
      }
      Notify();
    };
    absl::StatusOr<PreparedContainer> prepared =
        PrepareContainer(options_.containers, options_.root,
                         {.workload = &workload,
                          .dir = dir.string(),
                          .host_ports = host_ports,
                          .id_base = id_base,
                          .tenant_gid = *tenant_gid,
                          .progress = progress},
                         &pull_failed);
    MountFds held_ports;  // handed to the shim, which holds them to its end
    if (prepared.ok() && StoppedWhilePreparing(id)) {
      // It left the node's set while its image and mounts were being made: it never runs.
      absl::Status released = ReleaseContainer(options_.containers, dir.string());
      {
        absl::MutexLock lock(&mu_);
        Entry& e = entries_.at(id);
        e.preparing = false;
        e.released = released.ok();
        SetState(e, pb::WORKLOAD_STATE_STOPPED, pb::REASON_UNSPECIFIED, "");
      }
      Notify();
      return;
    }
    if (prepared.ok()) {
      ReserveHostPorts(host_ports, held_ports.fds);
      const absl::Duration grace = workload.has_stop_grace_period()
                                       ? FromProto(workload.stop_grace_period())
                                       : kDefaultGrace;
      std::vector<std::string> args = {options_.shim_path,
                                       "--dir",
                                       dir.string(),
                                       "--log-limit",
                                       std::to_string(options_.log_limit_bytes),
                                       "--grace-ms",
                                       std::to_string(absl::ToInt64Milliseconds(grace))};
      args.insert(args.end(), prepared->shim_args.begin(), prepared->shim_args.end());
      shim = ForkShim(std::move(args), {"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}, &held_ports);
    } else {
      shim = prepared.status();
    }
  }
  if (!shim.ok()) ReleaseContainer(options_.containers, dir.string()).IgnoreError();
  Started(id, shim, pull_failed ? pb::REASON_IMAGE_PULL_FAILED : pb::REASON_START_ERROR);
}

void ProcessRuntime::Started(const std::string& id, const absl::StatusOr<pid_t>& shim,
                             pb::Reason failure) {
  {
    // A spawning entry is never removed (Remove refuses unfinished ones): it is still there.
    absl::MutexLock lock(&mu_);
    Entry& e = entries_.at(id);
    e.spawning = false;
    e.preparing = false;
    if (shim.ok()) {
      e.shim = *shim;
      e.own_child = true;
      e.started = absl::Now();
      Watch(e, /*own_child=*/true);
      SetState(e, pb::WORKLOAD_STATE_STARTED, pb::REASON_UNSPECIFIED, "");
      if (e.stop_sent) SendStop(e);  // stopped while it was being started
    } else {
      std::error_code ec;
      fs::create_directories(e.dir, ec);
      SetState(e, pb::WORKLOAD_STATE_FAILED, failure,
               failure == pb::REASON_IMAGE_PULL_FAILED
                   ? absl::StrCat("image pull failed: ", shim.status().message())
                   : std::string(shim.status().message()));
    }
  }
  WakeLoop();  // it probes the new workload from now on
  Notify();
}

void ProcessRuntime::SendStop(Entry& e) {
  e.stop_sent = true;
  if (e.spawning || e.preparing) return;  // Start sends it once the shim runs
  const std::optional<pid_t> shim = ShimFiles(e.dir.string()).LiveShim();
  if (shim) {
    kill(*shim, SIGTERM);
  } else if (e.shim_gone || absl::Now() - e.started > kShimStartGrace || !e.own_child) {
    SetState(e, pb::WORKLOAD_STATE_STOPPED, pb::REASON_UNSPECIFIED, "");
  } else if (e.shim > 0) {
    kill(e.shim, SIGTERM);  // just started: it has not recorded itself yet
  }
}

absl::Status ProcessRuntime::Stop(std::string_view workload_id) {
  {
    absl::MutexLock lock(&mu_);
    auto it = entries_.find(std::string(workload_id));
    if (it == entries_.end() || Finished(it->second.state)) return absl::OkStatus();
    SendStop(it->second);
  }
  Notify();
  return absl::OkStatus();
}

absl::Status ProcessRuntime::Remove(std::string_view workload_id) {
  fs::path dir;
  bool container = false;
  {
    absl::MutexLock lock(&mu_);
    auto it = entries_.find(std::string(workload_id));
    if (it == entries_.end()) return absl::OkStatus();
    if (!Finished(it->second.state)) {
      return absl::FailedPreconditionError(
          absl::StrCat("workload ", std::string(workload_id), " still runs"));
    }
    dir = it->second.dir;
    container = it->second.container;
    if (!container) entries_.erase(it);  // a shim winding down stays watched until reaped
  }
  if (container) {
    // The directory holds mounts of the node's shared image layers: it goes only once they do.
    if (absl::Status released = ReleaseContainer(options_.containers, dir.string());
        !released.ok()) {
      return released;
    }
    if (!NothingMountedUnder(dir.string())) {
      return absl::InternalError(absl::StrCat("workload ", std::string(workload_id),
                                              ": something is still mounted under ", dir.string()));
    }
    absl::MutexLock lock(&mu_);
    entries_.erase(std::string(workload_id));
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  return absl::OkStatus();
}

std::vector<pb::WorkloadStatus> ProcessRuntime::List() const {
  absl::MutexLock lock(&mu_);
  std::vector<pb::WorkloadStatus> out;
  out.reserve(entries_.size());
  for (const auto& [id, e] : entries_) {
    if (e.spawning) continue;
    pb::WorkloadStatus s;
    s.set_workload_id(id);
    s.set_instance_id(e.workload.instance_id());
    s.set_state(e.state);
    s.set_exit_code(e.exit_code);
    s.set_reason(e.reason);
    s.set_message(e.message);
    *s.mutable_state_time() = ToProtoTime(e.state_time);
    for (const auto& [port, host] : e.host_ports) {
      pb::PortMapping* m = s.add_ports();
      m->set_port(port);
      m->set_host_port(host);
    }
    out.push_back(std::move(s));
  }
  return out;
}

bool ProcessRuntime::Tick(const std::vector<int>& exited_pidfds, bool sweep) {
  std::vector<Look> looks;
  bool starting = false;
  {
    absl::MutexLock lock(&mu_);
    for (int fd : exited_pidfds) ShimExited(fd);
    const absl::Time now = absl::Now();
    for (auto& [id, e] : entries_) {
      if (Finished(e.state) && e.container && !e.released && !e.spawning && !e.preparing &&
          (e.shim_gone || e.pidfd < 0 || sweep)) {
        Look& look = looks.emplace_back();
        look.id = id;
        look.dir = e.dir.string();
        look.container = true;
        look.release_only = true;
        continue;
      }
      if (Finished(e.state) || e.spawning || e.preparing) continue;
      const bool probing = e.state == pb::WORKLOAD_STATE_STARTED && !e.stop_sent;
      starting |= probing;
      if (!probing && !e.shim_gone && !sweep) continue;
      // Shims without a pidfd that we started are reaped here.
      if (e.own_child && e.pidfd < 0 && waitpid(e.shim, nullptr, WNOHANG) == e.shim) {
        e.own_child = false;
      }
      Look& look = looks.emplace_back();
      look.id = id;
      look.dir = e.dir.string();
      look.shim_gone = e.shim_gone;
      look.container = e.container;
      if (!probing) continue;
      for (const pb::Port& p : e.workload.ports()) {
        if (p.is_probe()) look.probe = p;
      }
      if (!look.probe) continue;
      look.probe_host_port = e.host_ports[look.probe->port()];
      look.probe_address = e.container ? options_.containers.probe_address : "127.0.0.1";
      const absl::Duration timeout = e.workload.has_probe_timeout()
                                         ? FromProto(e.workload.probe_timeout())
                                         : kDefaultProbeTimeout;
      look.probe_timed_out = now - e.started > timeout;
    }
  }
  // Files and probes (which block on the network) outside the lock. Probed entries stay (only
  // Remove erases, and only finished ones), so their ports are still theirs.
  for (Look& look : looks) {
    ShimFiles files(look.dir);
    look.exit = files.ReadExit();
    if (look.release_only && files.LiveShim()) continue;  // not yet: its shim still winds down
    if (look.container && (look.exit || look.shim_gone || look.release_only)) {
      // Its mounts and network go as soon as it has ended, not when it is removed.
      absl::Status released = ReleaseContainer(options_.containers, look.dir);
      look.released = released.ok();
      if (!released.ok()) {
        Logger("agent")->warn("workload {}: {}", look.id, std::string(released.message()));
      }
    }
    if (look.release_only) continue;
    if (look.exit || look.shim_gone) continue;
    look.live = files.LiveShim().has_value();
    if (!look.live || !look.probe || look.probe_timed_out) continue;
    look.probe_passed =
        look.probe->protocol() != pb::PROTOCOL_TCP
            ? ProbeHttp(look.probe_address, look.probe_host_port, look.probe->base_url(),
                        absl::Milliseconds(500))
            : ProbeTcp(look.probe_address, look.probe_host_port, absl::Milliseconds(200));
  }
  absl::MutexLock lock(&mu_);
  for (Look& look : looks) Apply(look);
  return starting;
}

void ProcessRuntime::Apply(Look& look) {
  auto it = entries_.find(look.id);
  if (it != entries_.end() && look.released) it->second.released = true;
  if (it == entries_.end() || Finished(it->second.state) || look.release_only) return;
  Entry& e = it->second;
  if (look.exit) {
    e.exit_code = look.exit->code;
    if (look.exit->stopped || e.stop_sent) {
      SetState(e, pb::WORKLOAD_STATE_STOPPED, pb::REASON_UNSPECIFIED, "");
    } else if (look.exit->oom_killed) {
      SetState(e, pb::WORKLOAD_STATE_FAILED, pb::REASON_OOM_KILLED,
               absl::StrCat("killed for using more than its memory limit (",
                            e.workload.limits().memory_bytes() >> 20, " MiB)"));
    } else if (e.container && look.exit->code == 127 && e.state == pb::WORKLOAD_STATE_STARTED) {
      SetState(e, pb::WORKLOAD_STATE_FAILED, pb::REASON_START_ERROR,
               absl::StrCat("the container did not start: ", LastLine(e.dir / "stderr.log")));
    } else {
      SetState(e, pb::WORKLOAD_STATE_EXITED, pb::REASON_WORKLOAD_EXITED,
               absl::StrCat("exited with code ", look.exit->code));
    }
    return;
  }
  // Gone without an exit: killed (the OOM killer, kill -9). A shim that is not ours and not
  // yet recorded counts as gone once it had time to record itself.
  if (look.shim_gone || (!look.live && !e.own_child && absl::Now() - e.started > kShimStartGrace)) {
    e.exit_code = 137;
    SetState(e, e.stop_sent ? pb::WORKLOAD_STATE_STOPPED : pb::WORKLOAD_STATE_EXITED,
             e.stop_sent ? pb::REASON_UNSPECIFIED : pb::REASON_WORKLOAD_EXITED,
             e.stop_sent ? "" : "its shim died without recording an exit");
    return;
  }
  // RUNNING means the sandbox is up: not before the shim has recorded itself.
  if (e.state != pb::WORKLOAD_STATE_STARTED || e.stop_sent || !look.live) return;
  if (!look.probe || look.probe_passed) {
    SetState(e, pb::WORKLOAD_STATE_RUNNING, pb::REASON_UNSPECIFIED, "");
  } else if (look.probe_timed_out) {
    const absl::Duration timeout = e.workload.has_probe_timeout()
                                       ? FromProto(e.workload.probe_timeout())
                                       : kDefaultProbeTimeout;
    SetState(e, pb::WORKLOAD_STATE_FAILED, pb::REASON_PROBE_TIMEOUT,
             absl::StrCat("port ", look.probe->port(), " did not answer within ",
                          absl::FormatDuration(timeout)));
    SendStop(e);
  }
}

void ProcessRuntime::Loop() {
  absl::Time next_sweep = absl::Now();
  bool starting = true;
  std::vector<int> exited;
  for (;;) {
    // Probes need a tick every probe interval; otherwise only exits (and the sweep) wake it.
    const absl::Duration wait =
        std::max(absl::ZeroDuration(), starting ? options_.probe_interval
                                                : std::min(kSweepEvery, next_sweep - absl::Now()));
    epoll_event events[64];
    const int n =
        epoll_wait(epoll_fd_, events, 64, static_cast<int>(absl::ToInt64Milliseconds(wait)) + 1);
    if (stopping_.HasBeenNotified()) return;
    exited.clear();
    for (int i = 0; i < n; ++i) {
      if (events[i].data.fd == wake_fd_) {
        uint64_t count;
        (void)!read(wake_fd_, &count, sizeof count);
      } else {
        exited.push_back(events[i].data.fd);
      }
    }
    const bool sweep = absl::Now() >= next_sweep;
    if (sweep) next_sweep = absl::Now() + kSweepEvery;
    starting = Tick(exited, sweep);
    Notify();
  }
}

void ProcessRuntime::Adopt() {
  std::error_code ec;
  fs::create_directories(options_.root, ec);
  chmod(options_.root.c_str(), 0711);
  auto log = Logger("agent");
  absl::MutexLock lock(&mu_);
  for (const auto& dir : fs::directory_iterator(options_.root, ec)) {
    if (!dir.is_directory()) continue;
    Entry e;
    e.dir = dir.path();
    std::ifstream wl(e.dir / "workload.pb", std::ios::binary);
    if (!e.workload.ParseFromIstream(&wl) || e.workload.workload_id() != e.dir.filename()) {
      continue;
    }
    std::ifstream ports(e.dir / "ports");
    for (int port, host; ports >> port >> host;) e.host_ports[port] = host;
    e.uid = uid_;  // started before workloads had uids of their own
    std::ifstream(e.dir / "uid") >> e.uid;
    e.container = fs::exists(e.dir / "container");
    std::ifstream state(e.dir / "state");
    int s = 0, reason = 0;
    int64_t millis = 0;
    state >> s >> reason >> e.exit_code >> millis;
    std::getline(state, e.message);
    std::getline(state, e.message);
    e.state = static_cast<pb::WorkloadState>(s);
    e.reason = static_cast<pb::Reason>(reason);
    e.state_time = absl::FromUnixMillis(millis);
    // A probe timeout counts again from now: the agent was away, not the workload.
    e.started = absl::Now();
    ShimFiles files(e.dir.string());
    e.stop_sent = files.Stopping();
    Entry& adopted = entries_[e.workload.workload_id()] = std::move(e);
    if (std::optional<pid_t> shim = files.LiveShim(); shim && !Finished(adopted.state)) {
      adopted.shim = *shim;
      Watch(adopted, /*own_child=*/false);
      // The pid could have been recycled between the check and pidfd_open: check again, now
      // that the pidfd pins whichever process it names.
      if (adopted.pidfd >= 0 && files.LiveShim() != shim) ShimExited(adopted.pidfd);
      log->info("workload {}: adopted (shim pid {})", adopted.workload.workload_id(), *shim);
      continue;
    } else if (adopted.state == pb::WORKLOAD_STATE_PULLING) {
      adopted.state = pb::WORKLOAD_STATE_FAILED;
      adopted.reason = pb::REASON_START_ERROR;
      adopted.message = "the agent restarted while it was being prepared";
      adopted.state_time = absl::Now();
      Persist(adopted);
    } else if (!Finished(adopted.state) && !files.ReadExit()) {
      adopted.exit_code = 137;
      adopted.state = pb::WORKLOAD_STATE_EXITED;
      adopted.reason = pb::REASON_WORKLOAD_EXITED;
      adopted.message = "its shim died while the agent was away";
      adopted.state_time = absl::Now();
      Persist(adopted);
    }
    if (adopted.container && Finished(adopted.state)) {
      adopted.released = ReleaseContainer(options_.containers, adopted.dir.string()).ok();
    }
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<Runtime>> NewProcessRuntime(ProcessRuntimeOptions options) {
  if (access(options.bwrap_path.c_str(), X_OK) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "bubblewrap not found at ", options.bwrap_path, " (apt-get install bubblewrap)"));
  }
  if (access(options.shim_path.c_str(), X_OK) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("gpuaas-workload-shim not found at ", options.shim_path));
  }
  if (options.first_port <= 0 || options.last_port < options.first_port ||
      options.last_port > 65535) {
    return absl::InvalidArgumentError("port range: want FIRST-LAST within 1-65535");
  }
  uid_t uid = getuid();
  gid_t gid = getgid();
  if (geteuid() == 0) {
    const passwd* pw = getpwnam(options.workload_user.c_str());
    uint32_t numeric = 0;
    if (pw != nullptr) {
      uid = pw->pw_uid;
      gid = pw->pw_gid;
    } else if (absl::SimpleAtoi(options.workload_user, &numeric)) {
      uid = numeric;
      gid = numeric;
    } else {
      return absl::FailedPreconditionError(
          absl::StrCat("workload user \"", options.workload_user, "\" does not exist"));
    }
  }
  if (uid == 0) {
    return absl::FailedPreconditionError("workloads never run as root: pick --workload-user");
  }
  if ((options.first_uid != 0 || options.last_uid != 0) &&
      (options.first_uid == 0 || options.last_uid < options.first_uid ||
       options.last_uid >= uid_t{1} << 31)) {
    return absl::InvalidArgumentError("workload uid range: want FIRST-LAST within 1-2147483647");
  }
  if ((options.first_gid != 0 || options.last_gid != 0) &&
      (options.first_gid == 0 || options.last_gid < options.first_gid ||
       options.last_gid >= gid_t{1} << 31 ||
       (options.first_gid <= options.last_uid && options.first_uid <= options.last_gid))) {
    return absl::InvalidArgumentError(
        "workload gid range: want FIRST-LAST within 1-2147483647, apart from the uid range");
  }
  const int abi = LandlockAbi();
  if (abi < kLandlockScopeAbi) {
    const std::string lacks = absl::StrCat("this kernel's Landlock ABI is ", abi,
                                           " (4 confines workloads' ports, 6 scopes their ",
                                           "abstract sockets and signals)");
    if (options.require_landlock) {
      return absl::FailedPreconditionError(
          absl::StrCat(lacks, ": Landlock is required (--landlock=required)"));
    }
    Logger("agent")->warn("{}: workloads run without {}", lacks,
                          abi < kLandlockPortsAbi ? "port confinement or scoping" : "scoping");
  }
  options.root = fs::absolute(options.root).lexically_normal().string();
  auto runtime = std::make_unique<ProcessRuntime>(std::move(options), uid, gid);
  runtime->Adopt();
  runtime->StartLoop();
  return runtime;
}

}  // namespace gpuaas::agent
