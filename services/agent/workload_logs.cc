#include "services/agent/workload_logs.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "libs/authz/node_calls.h"
#include "libs/common/status_macros.h"
#include "services/agent/log_cursor.h"
#include "services/agent/workload_dir.h"

namespace gpuaas::agent {
namespace {

namespace pb = ::gpuaas::instance::v1;

constexpr int kDefaultTailLines = 100;
constexpr int kMaxTailLines = 10000;
constexpr size_t kMaxChunk = 32 << 10;
// How often a follow looks whether its workload finished when no file event woke it.
constexpr int kPollMillis = 500;

// One stream's reading: its cursors, and what wakes a follow (the directory's inotify events,
// or Cancel through an eventfd).
class WorkloadLogReader final : public rpc::PullSource<pb::LogChunk> {
 public:
  WorkloadLogReader(std::string workload_id, const std::string& dir,
                    std::vector<std::pair<pb::LogStream, LogCursor>> cursors, bool follow,
                    std::function<bool(const std::string&)> finished, SlotLimiter::Slot slot)
      : workload_id_(std::move(workload_id)),
        cursors_(std::move(cursors)),
        follow_(follow),
        finished_(std::move(finished)),
        slot_(std::move(slot)) {
    cancel_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (follow_) {
      inotify_fd_ = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
      // Without inotify (a full per-user limit) the follow still works, by the poll alone.
      if (inotify_fd_ >= 0) {
        inotify_add_watch(inotify_fd_, dir.c_str(),
                          IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE_SELF);
      }
    }
  }

  ~WorkloadLogReader() override {
    if (cancel_fd_ >= 0) close(cancel_fd_);
    if (inotify_fd_ >= 0) close(inotify_fd_);
  }

  absl::StatusOr<std::optional<pb::LogChunk>> Next() override {
    for (;;) {
      if (cancelled_) return absl::CancelledError("the client went away");
      if (std::optional<pb::LogChunk> chunk = ReadAny(); chunk.has_value()) return chunk;
      if (!follow_ || drained_) return std::nullopt;
      // Asked only when nothing is left to read (it lists the runtime's workloads), then read
      // once more: whatever a finished workload wrote is in the files by now.
      if (finished_(workload_id_)) {
        drained_ = true;
        continue;
      }
      Wait();
    }
  }

  void Cancel() override {
    cancelled_ = true;
    const uint64_t one = 1;
    (void)!write(cancel_fd_, &one, sizeof one);
  }

 private:
  // The next chunk of any stream: the tail of each stream in turn (stdout's first), then in a
  // follow whichever has news, taking turns so one noisy stream does not starve the other.
  std::optional<pb::LogChunk> ReadAny() {
    for (size_t k = 0; k < cursors_.size(); ++k) {
      const size_t i = (next_ + k) % cursors_.size();
      std::string data = cursors_[i].second.ReadSome(kMaxChunk);
      if (data.empty()) continue;
      if (tailed_) next_ = (i + 1) % cursors_.size();
      pb::LogChunk chunk;
      chunk.set_stream(cursors_[i].first);
      chunk.set_data(std::move(data));
      chunk.set_workload_id(workload_id_);
      return chunk;
    }
    tailed_ = true;
    return std::nullopt;
  }

  // Until a file event, Cancel, or the poll interval.
  void Wait() {
    pollfd fds[2] = {{cancel_fd_, POLLIN, 0}, {inotify_fd_, POLLIN, 0}};
    poll(fds, inotify_fd_ >= 0 ? 2 : 1, kPollMillis);
    if (fds[1].revents & POLLIN) {
      char events[4096];
      while (read(inotify_fd_, events, sizeof events) > 0) {
      }
    }
  }

  const std::string workload_id_;
  std::vector<std::pair<pb::LogStream, LogCursor>> cursors_;
  const bool follow_;
  std::function<bool(const std::string&)> finished_;
  SlotLimiter::Slot slot_;
  std::atomic<bool> cancelled_{false};
  int cancel_fd_ = -1;
  int inotify_fd_ = -1;
  size_t next_ = 0;
  bool tailed_ = false;
  bool drained_ = false;  // the workload finished: what is left to read is all there is
};

// A workload id names a directory right under the root: never a path.
}  // namespace

WorkloadLogs::WorkloadLogs(WorkloadLogsOptions options)
    : options_(std::move(options)),
      streams_(options_.max_streams, options_.max_streams_per_instance, "log streams", "instance") {
}

absl::StatusOr<rpc::PullSourcePtr<pb::LogChunk>> WorkloadLogs::Open(
    const authz::Principal& p, const pb::ReadWorkloadLogsRequest& req) {
  GPUAAS_RETURN_IF_ERROR(
      authz::RequireAgentCall(p, options_.node_id, authz::kPurposeReadWorkloadLogs));
  // The agent links no service kit (libs/service brings the database in): the same messages.
  if (req.workload_id().empty()) return absl::InvalidArgumentError("workload_id: required");
  if (req.tail_lines() < 0 || req.tail_lines() > kMaxTailLines) {
    return absl::InvalidArgumentError(absl::StrCat("tail_lines: must be 0 to ", kMaxTailLines));
  }
  if (!pb::LogStream_IsValid(req.stream())) {
    return absl::InvalidArgumentError("stream: unknown stream");
  }
  const std::string dir = options_.root + "/" + req.workload_id();
  struct stat st;
  if (!PlainWorkloadId(req.workload_id()) || lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::NotFoundError(absl::StrCat("workload ", req.workload_id(), " not found"));
  }
  // One instance's streams cannot take the node's pool from the other tenants' instances.
  GPUAAS_ASSIGN_OR_RETURN(SlotLimiter::Slot slot,
                          streams_.Acquire(InstanceOfWorkload(req.workload_id())));
  const int lines = req.tail_lines() == 0 ? kDefaultTailLines : req.tail_lines();
  std::vector<std::pair<pb::LogStream, LogCursor>> cursors;
  for (pb::LogStream s : {pb::LOG_STREAM_STDOUT, pb::LOG_STREAM_STDERR}) {
    if (req.stream() != pb::LOG_STREAM_UNSPECIFIED && req.stream() != s) continue;
    const char* name = s == pb::LOG_STREAM_STDOUT ? "/stdout.log" : "/stderr.log";
    cursors.emplace_back(s, LogCursor::AtTail(dir + name, lines));
  }
  return std::make_unique<WorkloadLogReader>(req.workload_id(), dir, std::move(cursors),
                                             req.follow(), options_.finished, std::move(slot));
}

grpc::ServerWriteReactor<pb::LogChunk>* WorkloadLogServiceImpl::ReadWorkloadLogs(
    grpc::CallbackServerContext* ctx, const pb::ReadWorkloadLogsRequest* req) {
  return rpc::RunPullStream<pb::ReadWorkloadLogsRequest, pb::LogChunk>(
      handler_, ctx, req,
      [this](const authz::Principal& p, const pb::ReadWorkloadLogsRequest& r,
             grpc::CallbackServerContext&) { return logs_.Open(p, r); });
}

}  // namespace gpuaas::agent
