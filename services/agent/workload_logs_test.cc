#include "services/agent/workload_logs.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "libs/authz/node_calls.h"
#include "libs/testing/temp_dir.h"

namespace gpuaas::agent {
namespace {

namespace pb = ::gpuaas::instance::v1;

// A token minted for `node`'s workload logs (as the auth service mints them for the instance
// service), or, with an empty `node`, the role's own token.
authz::Principal As(common::v1::Role role, const std::string& node = "node-a",
                    std::string_view purpose = authz::kPurposeReadWorkloadLogs) {
  authz::Principal p;
  p.user_id = "u";
  p.role = role;
  if (role == common::v1::ROLE_MEMBER) p.tenant_id = "t";
  if (!node.empty()) {
    p.audience = authz::NodeAudience(node);
    p.purpose = std::string(purpose);
  }
  return p;
}

class WorkloadLogsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* id : {"inst-1.1", "inst-1.2", "inst-2.1"}) {
      std::filesystem::create_directories(dir_.path() / id);
    }
    Append("stdout.log", "a\nb\n");
    Append("stderr.log", "oops\n");
  }

  void Append(const std::string& name, const std::string& text) {
    std::ofstream(dir_.path() / "inst-1.1" / name, std::ios::app) << text;
  }

  absl::StatusOr<rpc::PullSourcePtr<pb::LogChunk>> Open(
      const std::string& id, int tail = 0, bool follow = false,
      common::v1::Role role = common::v1::ROLE_SERVICE) {
    pb::ReadWorkloadLogsRequest req;
    req.set_workload_id(id);
    req.set_tail_lines(tail);
    req.set_follow(follow);
    return logs_.Open(As(role), req);
  }

  // Every chunk until the source ends: "stdout:" / "stderr:" prefixed.
  static std::string Drain(rpc::PullSource<pb::LogChunk>& source) {
    std::string all;
    for (;;) {
      absl::StatusOr<std::optional<pb::LogChunk>> next = source.Next();
      if (!next.ok() || !next->has_value()) return all;
      all += ((*next)->stream() == pb::LOG_STREAM_STDERR ? "stderr:" : "stdout:") + (*next)->data();
    }
  }

  testing::TempDir dir_;
  std::atomic<bool> finished_{true};
  WorkloadLogs logs_{{.node_id = "node-a",
                      .root = dir_.path().string(),
                      .finished = [this](const std::string&) { return finished_.load(); },
                      .max_streams = 3,
                      .max_streams_per_instance = 2}};
};

// Only a token minted for this node's logs reads: never a service's or an admin's own, one
// minted for another node or another call, nor a member's.
TEST_F(WorkloadLogsTest, OnlyATokenMintedForThisNodesLogsReads) {
  pb::ReadWorkloadLogsRequest req;
  req.set_workload_id("inst-1.1");
  const auto code = [&](const authz::Principal& p) { return logs_.Open(p, req).status().code(); };
  const auto kDenied = absl::StatusCode::kPermissionDenied;
  EXPECT_EQ(code(As(common::v1::ROLE_MEMBER)), kDenied);
  EXPECT_EQ(code(As(common::v1::ROLE_SERVICE, "")), kDenied);
  EXPECT_EQ(code(As(common::v1::ROLE_PLATFORM_ADMIN, "")), kDenied);
  EXPECT_EQ(code(As(common::v1::ROLE_SERVICE, "node-b")), kDenied);
  EXPECT_EQ(code(As(common::v1::ROLE_SERVICE, "node-a", "run_workloads")), kDenied);
  EXPECT_EQ(code(As(common::v1::ROLE_SERVICE)), absl::StatusCode::kOk);
}

TEST_F(WorkloadLogsTest, BadRequestsAreNamedAndPathsAreNotWorkloads) {
  EXPECT_EQ(Open("inst-1.1", -1).status().message(), "tail_lines: must be 0 to 10000");
  EXPECT_EQ(Open("inst-1.1", 10001).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Open("").status().code(), absl::StatusCode::kInvalidArgument);
  for (const char* id : {"../inst-1.1", "inst-1.1/..", "..", ".", "missing.1", "a/b"}) {
    EXPECT_EQ(Open(id).status().code(), absl::StatusCode::kNotFound) << id;
  }
}

TEST_F(WorkloadLogsTest, TailsStdoutThenStderr) {
  auto source = Open("inst-1.1", 1);
  ASSERT_TRUE(source.ok()) << source.status();
  EXPECT_EQ(Drain(**source), "stdout:b\nstderr:oops\n");
}

TEST_F(WorkloadLogsTest, AFollowEndsOnceTheFinishedWorkloadIsDrained) {
  finished_ = false;
  auto source = Open("inst-1.1", 0, true);
  ASSERT_TRUE(source.ok()) << source.status();
  std::thread writer([&] {
    Append("stdout.log", "c\n");
    finished_ = true;  // what it wrote before finishing is still sent
  });
  const std::string all = Drain(**source);
  writer.join();
  EXPECT_EQ(all.substr(0, 10), "stdout:a\nb") << all;
  EXPECT_NE(all.find("c\n"), std::string::npos) << all;
}

TEST_F(WorkloadLogsTest, CancelEndsAFollowAndStreamsAreBounded) {
  finished_ = false;
  auto first = Open("inst-1.1", 0, true);
  auto second = Open("inst-1.2", 0, true);  // another run of the same instance
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(Open("inst-1.1").status().code(), absl::StatusCode::kResourceExhausted)
      << "one instance holds at most its share";
  auto other = Open("inst-2.1", 0, true);
  EXPECT_TRUE(other.ok()) << "another instance still gets a stream";
  EXPECT_EQ(Open("inst-2.1").status().code(), absl::StatusCode::kResourceExhausted)
      << "the node's total";
  other->reset();
  (*first)->Cancel();
  EXPECT_EQ((*first)->Next().status().code(), absl::StatusCode::kCancelled);
  first->reset();
  EXPECT_TRUE(Open("inst-1.1").ok()) << "a closed stream frees its place";
}

}  // namespace
}  // namespace gpuaas::agent
