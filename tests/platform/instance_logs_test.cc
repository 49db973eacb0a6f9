// GetInstanceLogs on the real platform: real sandboxed workloads write their output, their
// node's real agent serves it (WorkloadLogService) and the instance service relays it: the
// last lines, a follow that sees lines as they are written, a workload that writes 100 MB
// (its logs stay under the cap and the tail still works), the logs of a workload that exited
// (a FAILED instance), who may read them, and `gpuaasctl instances logs`.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gpuaas/instance/v1/workload_logs.grpc.pb.h"
#include "libs/testing/eventually.h"
#include "libs/testing/pg_test.h"
#include "libs/testing/temp_dir.h"
#include "tests/platform/platform_stack.h"

namespace gpuaas::platform_testing {
namespace {

namespace fs = std::filesystem;
using gpuaas::testing::Eventually;

struct Logs {
  grpc::Status status;
  std::string out;
  std::string err;
};

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines = absl::StrSplit(text, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

class InstanceLogsTest : public gpuaas::testing::PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped()) return;
    stack_ = std::make_unique<PlatformStack>(dsn(), dir_.path());
    token_ = stack_->CreateTenant("studio-a");
    stack_->CreateSpecWithStocks("a100.1x", "A100-80GB", 1, 0, 2);
  }
  void TearDown() override {
    stack_.reset();
    PgTest::TearDown();
  }

  void Create(const std::string& id, const std::string& cmd) {
    instancepb::CreateInstanceRequest req;
    req.set_instance_id(id);
    req.set_spec_name("a100.1x");
    req.mutable_template_()->set_cmd(cmd);
    instancepb::Instance out;
    grpc::Status s =
        stack_->instances().CreateInstance(PlatformStack::Ctx(token_).get(), req, &out);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }

  instancepb::Instance WaitState(const std::string& id, instancepb::State state) {
    return stack_->WaitInstance(
        token_, id, [state](const instancepb::Instance& i) { return i.state() == state; });
  }

  // GetInstanceLogs as `token` until the stream ends, or until `enough` holds of what came
  // (then the call is cancelled and the status is OK).
  Logs Read(const std::string& token, const instancepb::GetInstanceLogsRequest& req,
            const std::function<bool(const Logs&)>& enough = nullptr) {
    Logs logs;
    std::unique_ptr<grpc::ClientContext> ctx = PlatformStack::Ctx(token);
    auto reader = stack_->instances().GetInstanceLogs(ctx.get(), req);
    instancepb::LogChunk chunk;
    while (reader->Read(&chunk)) {
      EXPECT_EQ(chunk.workload_id().substr(0, req.instance_id().size()), req.instance_id());
      (chunk.stream() == instancepb::LOG_STREAM_STDERR ? logs.err : logs.out) += chunk.data();
      if (enough && enough(logs)) {
        ctx->TryCancel();
        reader->Finish();
        return logs;
      }
    }
    logs.status = reader->Finish();
    return logs;
  }

  static instancepb::GetInstanceLogsRequest Request(const std::string& id, int tail_lines,
                                                    instancepb::LogStream stream,
                                                    bool follow = false) {
    instancepb::GetInstanceLogsRequest req;
    req.set_instance_id(id);
    req.set_tail_lines(tail_lines);
    req.set_stream(stream);
    req.set_follow(follow);
    return req;
  }

  gpuaas::testing::TempDir dir_;
  std::unique_ptr<PlatformStack> stack_;
  std::string token_;
};

TEST_F(InstanceLogsTest, TailsAndFollowsARunningWorkload) {
  // 300 lines at once, one on stderr, then a line every 200 ms.
  Create("ticker",
         "for i in $(seq 1 300); do echo \"line $i\"; done; echo 'to stderr' >&2; "
         "i=0; while true; do i=$((i+1)); echo \"tick $i\"; sleep 0.2; done");
  ASSERT_EQ(WaitState("ticker", instancepb::STATE_RUNNING).state(), instancepb::STATE_RUNNING)
      << stack_->instance().Log();
  // Until five ticks were written (the workload's own pace, whatever the machine's load).
  Logs five;
  ASSERT_TRUE(Eventually([&] {
    five = Read(token_, Request("ticker", 5, instancepb::LOG_STREAM_STDOUT));
    return five.out.find("line") == std::string::npos && five.out.find("tick") == 0;
  })) << five.out
      << stack_->agent("node-a").Log();
  ASSERT_TRUE(five.status.ok()) << five.status.error_message();
  ASSERT_EQ(Lines(five.out).size(), 5u) << five.out;
  EXPECT_TRUE(five.err.empty()) << "only stdout was asked for";
  for (const std::string& line : Lines(five.out)) EXPECT_EQ(line.substr(0, 5), "tick ") << line;

  // The default tail is 100 lines of each stream; stderr has one.
  Logs tail = Read(token_, Request("ticker", 0, instancepb::LOG_STREAM_UNSPECIFIED));
  ASSERT_TRUE(tail.status.ok()) << tail.status.error_message();
  EXPECT_EQ(Lines(tail.out).size(), 100u) << tail.out;
  EXPECT_EQ(tail.err, "to stderr\n");

  // A follow starts at the last line and sees the ticks that come after it.
  Logs followed = Read(token_, Request("ticker", 1, instancepb::LOG_STREAM_STDOUT, true),
                       [&](const Logs& l) { return Lines(l.out).size() >= 4; });
  ASSERT_TRUE(followed.status.ok()) << followed.status.error_message();
  const std::vector<std::string> lines = Lines(followed.out);
  ASSERT_GE(lines.size(), 4u);
  int previous = 0;
  for (const std::string& line : lines) {
    ASSERT_EQ(line.substr(0, 5), "tick ") << line;
    const int n = std::stoi(line.substr(5));
    if (previous != 0) {
      EXPECT_EQ(n, previous + 1) << "in order, none lost";
    }
    previous = n;
  }
}

TEST_F(InstanceLogsTest, AFailedInstancesLogsStayReadable) {
  Create("crasher", "echo 'about to fail'; echo 'bad thing happened' >&2; exit 3");
  instancepb::Instance failed = WaitState("crasher", instancepb::STATE_FAILED);
  ASSERT_EQ(failed.state(), instancepb::STATE_FAILED);
  EXPECT_EQ(failed.reason(), instancepb::REASON_WORKLOAD_EXITED);
  // Once the run is torn down (its stock released), the node keeps its files.
  ASSERT_TRUE(Eventually([&] { return stack_->ClaimedStocks().count("crasher") == 0; }));

  Logs logs = Read(token_, Request("crasher", 0, instancepb::LOG_STREAM_UNSPECIFIED));
  ASSERT_TRUE(logs.status.ok()) << logs.status.error_message();
  EXPECT_EQ(logs.out, "about to fail\n");
  EXPECT_EQ(logs.err, "bad thing happened\n");
  // A follow of a finished workload ends by itself once drained.
  Logs followed = Read(token_, Request("crasher", 0, instancepb::LOG_STREAM_STDERR, true));
  ASSERT_TRUE(followed.status.ok()) << followed.status.error_message();
  EXPECT_EQ(followed.err, "bad thing happened\n");

  // gpuaasctl writes each stream to its own: stdout's chunks to stdout, stderr's to stderr.
  const fs::path out = dir_.path() / "ctl.out";
  const fs::path err = dir_.path() / "ctl.err";
  const std::string command = absl::StrCat(
      "cd '", dir_.path().string(), "' && env -i HOME='", dir_.path().string(),
      "' GPUAAS_TOKEN=\"$CTL_TOKEN\" GPUAAS_INSTANCE_ADDR=", stack_->instance().address(), " '",
      GPUAAS_CTL_BINARY, "' instances logs crasher --tail 5 > '", out.string(), "' 2> '",
      err.string(), "'");
  // The token goes through the environment, never a command line others can read.
  setenv("CTL_TOKEN", token_.c_str(), 1);
  const int code = std::system(command.c_str());
  unsetenv("CTL_TOKEN");
  EXPECT_EQ(code, 0) << ReadFile(err);
  EXPECT_EQ(ReadFile(out), "about to fail\n");
  EXPECT_EQ(ReadFile(err), "bad thing happened\n");
}

TEST_F(InstanceLogsTest, AHundredMegabytesStayUnderTheCapAndTailStillWorks) {
  // 100 MiB of 100-byte lines as fast as the shim takes them, then a last line.
  Create("flood",
         "yes xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
         "xxxxxxxxxxxxxxxxxx | head -c 104857600; echo END; exec sleep 3600");
  ASSERT_EQ(WaitState("flood", instancepb::STATE_RUNNING).state(), instancepb::STATE_RUNNING);

  // A follow keeps up through the shim's rotations (or skips what rotated away twice before it
  // read it: the cap wins) and reaches the last line; only the end is kept here.
  {
    auto ctx = std::make_unique<grpc::ClientContext>();
    ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(180));
    ctx->AddMetadata("authorization", "Bearer " + token_);
    auto reader = stack_->instances().GetInstanceLogs(
        ctx.get(), Request("flood", 1, instancepb::LOG_STREAM_STDOUT, true));
    std::string end;
    int64_t received = 0;
    for (instancepb::LogChunk chunk; reader->Read(&chunk);) {
      received += static_cast<int64_t>(chunk.data().size());
      end = (end + chunk.data())
                .substr(std::max<size_t>(end.size() + chunk.data().size(), 200) - 200);
      if (end.size() >= 4 && end.substr(end.size() - 4) == "END\n") break;
    }
    ctx->TryCancel();
    reader->Finish();
    ASSERT_GE(end.size(), 4u);
    EXPECT_EQ(end.substr(end.size() - 4), "END\n") << received << " bytes followed";
  }

  Logs tail;
  ASSERT_TRUE(Eventually(
      [&] {
        tail = Read(token_, Request("flood", 3, instancepb::LOG_STREAM_STDOUT));
        return tail.out.size() >= 4 && tail.out.substr(tail.out.size() - 4) == "END\n";
      },
      absl::Seconds(120)))
      << tail.status.error_message();
  const std::vector<std::string> lines = Lines(tail.out);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], std::string(99, 'x'));
  EXPECT_EQ(lines[1], std::string(99, 'x'));

  // The shim keeps each stream under its cap (10 MiB by default): the rest went, not the disk.
  const fs::path dir = stack_->workload_root("node-a") / "flood.1";
  uintmax_t total = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    // disk.img is the container's own (sparse) file system, held to the spec's disk.
    if (entry.is_regular_file() && entry.path().filename() != "disk.img") {
      total += entry.file_size();
    }
  }
  EXPECT_LE(total, uintmax_t{11} << 20) << "the workload's directory holds " << total << " bytes";
}

TEST_F(InstanceLogsTest, OnlyTheTenantReadsAndOnlyTokensMintedForTheNodeAskTheAgent) {
  Create("private", "echo secret-output; exec sleep 3600");
  ASSERT_EQ(WaitState("private", instancepb::STATE_RUNNING).state(), instancepb::STATE_RUNNING);
  const std::string other = stack_->CreateTenant("studio-b");

  Logs theirs = Read(other, Request("private", 0, instancepb::LOG_STREAM_UNSPECIFIED));
  EXPECT_EQ(theirs.status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_TRUE(theirs.out.empty());
  Logs missing = Read(token_, Request("nope", 0, instancepb::LOG_STREAM_UNSPECIFIED));
  EXPECT_EQ(missing.status.error_code(), grpc::StatusCode::NOT_FOUND);
  Logs bad = Read(token_, Request("private", 10001, instancepb::LOG_STREAM_UNSPECIFIED));
  EXPECT_EQ(bad.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(bad.status.error_message().find("tail_lines"), std::string::npos);

  // The agent's own service.
  auto channel =
      grpc::CreateChannel(stack_->agent("node-a").address(), grpc::InsecureChannelCredentials());
  auto agent = instancepb::WorkloadLogService::NewStub(channel);
  const auto read_agent = [&](const std::string& token, const std::string& workload_id) {
    instancepb::ReadWorkloadLogsRequest req;
    req.set_workload_id(workload_id);
    std::unique_ptr<grpc::ClientContext> ctx = PlatformStack::Ctx(token);
    auto reader = agent->ReadWorkloadLogs(ctx.get(), req);
    std::string data;
    for (instancepb::LogChunk chunk; reader->Read(&chunk);) data += chunk.data();
    return std::make_pair(reader->Finish(), data);
  };
  // Only a token minted for this node's logs is served (issue 32): a tenant's, an admin's own
  // and one minted for another node are refused by their audience.
  const auto mint = [&](const std::string& node_id) {
    auto minter = auth::v1::NodeTokenService::NewStub(
        grpc::CreateChannel(stack_->auth().address(), grpc::InsecureChannelCredentials()));
    auth::v1::IssueNodeTokenRequest req;
    req.set_node_id(node_id);
    req.set_purpose(auth::v1::AGENT_CALL_PURPOSE_READ_WORKLOAD_LOGS);
    auth::v1::IssueNodeTokenResponse out;
    const grpc::Status s =
        minter->IssueNodeToken(PlatformStack::Ctx(stack_->admin_token()).get(), req, &out);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return out.access_token();
  };
  const std::string minted = mint("node-a");
  for (const std::string& refused : {token_, stack_->admin_token(), mint("node-b")}) {
    EXPECT_EQ(read_agent(refused, "private.1").first.error_code(),
              grpc::StatusCode::UNAUTHENTICATED);
  }
  EXPECT_EQ(read_agent("", "private.1").first.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  // RUNNING is reported once the workload is started, not once its first line is written.
  grpc::Status status;
  std::string data;
  EXPECT_TRUE(Eventually([&] {
    std::tie(status, data) = read_agent(minted, "private.1");
    return status.ok() && data == "secret-output\n";
  })) << status.error_message()
      << " " << data;
  EXPECT_EQ(read_agent(minted, "../private.1").first.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(read_agent(minted, "nobody.1").first.error_code(), grpc::StatusCode::NOT_FOUND);

  // The caller's deadline reaches the agent: a follow ends with it instead of hanging.
  {
    auto ctx = std::make_unique<grpc::ClientContext>();
    ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
    ctx->AddMetadata("authorization", "Bearer " + token_);
    auto reader = stack_->instances().GetInstanceLogs(
        ctx.get(), Request("private", 0, instancepb::LOG_STREAM_UNSPECIFIED, true));
    std::string data;
    for (instancepb::LogChunk chunk; reader->Read(&chunk);) data += chunk.data();
    EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
    EXPECT_EQ(data, "secret-output\n");
  }

  // Its node's agent gone: UNAVAILABLE (the workload itself outlives the agent).
  stack_->agent("node-a").Kill();
  Logs unreachable = Read(token_, Request("private", 0, instancepb::LOG_STREAM_UNSPECIFIED));
  EXPECT_EQ(unreachable.status.error_code(), grpc::StatusCode::UNAVAILABLE)
      << unreachable.status.error_message();
}

}  // namespace
}  // namespace gpuaas::platform_testing
