// instances logs ID [-f] [--tail N] [--stream stdout|stderr]: the workload's output, stdout
// chunks to stdout and stderr chunks to stderr, written as they arrive.
#include <cstdio>
#include <memory>
#include <string>

#include "tools/gpuaasctl/commands.h"

namespace gpuaas::ctl {
namespace {

namespace instancepb = ::gpuaas::instance::v1;

struct LogFlags {
  std::string instance_id;
  bool follow = false;
  int tail = 0;
  std::string stream;
};

absl::Status ParseStream(const std::string& name, instancepb::LogStream& out) {
  if (name.empty()) {
    out = instancepb::LOG_STREAM_UNSPECIFIED;
  } else if (name == "stdout") {
    out = instancepb::LOG_STREAM_STDOUT;
  } else if (name == "stderr") {
    out = instancepb::LOG_STREAM_STDERR;
  } else {
    return absl::InvalidArgumentError("--stream: stdout or stderr");
  }
  return absl::OkStatus();
}

}  // namespace

void AddInstanceLogCommands(CLI::App& root, Context& ctx) {
  CLI::App* group = root.get_subcommand("instances");
  auto f = std::make_shared<LogFlags>();
  CLI::App* sub = group->add_subcommand(
      "logs",
      "the workload's output: the last lines of stdout and stderr, then with -f what it "
      "writes until it ends (or Ctrl-C)");
  sub->add_option("instance", f->instance_id, "instance id")->required();
  sub->add_flag("-f,--follow", f->follow, "keep writing what the workload writes");
  sub->add_option("--tail", f->tail, "lines from the end of each stream (default 100, max 10000)")
      ->check(CLI::Range(0, 10000));
  sub->add_option("--stream", f->stream, "only stdout or only stderr (default both)");
  OnRun(sub, ctx, [f](Session& s) -> absl::Status {
    instancepb::GetInstanceLogsRequest req;
    req.set_instance_id(f->instance_id);
    req.set_tail_lines(f->tail);
    req.set_follow(f->follow);
    instancepb::LogStream stream = instancepb::LOG_STREAM_UNSPECIFIED;
    GPUAAS_RETURN_IF_ERROR(ParseStream(f->stream, stream));
    req.set_stream(stream);
    return s.GetInstanceLogs(req, [](const instancepb::LogChunk& chunk) {
      // Raw bytes as the workload wrote them, flushed per chunk so a follow shows lines as
      // they come.
      std::FILE* out = chunk.stream() == instancepb::LOG_STREAM_STDERR ? stderr : stdout;
      std::fwrite(chunk.data().data(), 1, chunk.data().size(), out);
      std::fflush(out);
      return true;
    });
  });
}

}  // namespace gpuaas::ctl
