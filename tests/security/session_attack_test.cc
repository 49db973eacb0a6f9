// Terminals and port-forwards (issue 35) as an attacker holds them: a member removed from the
// tenant keeps the terminal it opened before (a session is checked again while open, so it ends
// within --session-recheck), and a stopped instance's sessions end with it. A colleague's
// session beside them stays open.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include "libs/testing/eventually.h"
#include "libs/testing/pg_test.h"
#include "libs/testing/temp_dir.h"
#include "tests/platform/platform_stack.h"

namespace gpuaas::security {
namespace {

namespace instancepb = ::gpuaas::instance::v1;
using platform_testing::PlatformStack;

// An interactive shell in `instance_id` as `token`, kept open.
class Terminal final {
 public:
  Terminal(const std::string& address, const std::string& token, const std::string& instance_id)
      : stub_(instancepb::InstanceSessionService::NewStub(
            grpc::CreateChannel(address, grpc::InsecureChannelCredentials()))) {
    ctx_.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(120));
    ctx_.AddMetadata("authorization", "Bearer " + token);
    stream_ = stub_->ExecInstance(&ctx_);
    instancepb::ExecInstanceRequest start;
    start.mutable_start()->set_instance_id(instance_id);
    start.mutable_start()->add_command("sh");
    start.mutable_start()->set_tty(true);
    stream_->Write(start);
  }

  // Types `keys` and reads until `until` shows; false when the session ended first.
  bool Type(const std::string& keys, const std::string& until) {
    instancepb::ExecInstanceRequest in;
    in.set_stdin(keys);
    if (!stream_->Write(in)) return false;
    for (instancepb::ExecInstanceResponse r; screen_.find(until) == std::string::npos;) {
      if (!stream_->Read(&r)) return false;
      screen_ += r.stdout();
    }
    screen_.clear();
    return true;
  }

  // Reads until the session ends; its status.
  grpc::Status End() {
    for (instancepb::ExecInstanceResponse r; stream_->Read(&r);) {
    }
    return stream_->Finish();
  }

 private:
  std::unique_ptr<instancepb::InstanceSessionService::Stub> stub_;
  grpc::ClientContext ctx_;
  std::unique_ptr<
      grpc::ClientReaderWriter<instancepb::ExecInstanceRequest, instancepb::ExecInstanceResponse>>
      stream_;
  std::string screen_;
};

class SessionAttackTest : public gpuaas::testing::PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped()) return;
    stack_ = std::make_unique<PlatformStack>(
        dsn(), dir_.path(),
        platform_testing::PlatformOptions{.instance_flags = {"--session-recheck=0.5"}});
    member_ = stack_->CreateTenant("studio");
    stack_->CreateSpecWithStocks("a100.1x", "A100-80GB", 1, 0, 2);
    instancepb::CreateInstanceRequest req;
    req.set_instance_id("shared-nb");
    req.set_spec_name("a100.1x");
    req.mutable_template_()->set_cmd("exec sleep 3600");
    instancepb::Instance out;
    ASSERT_TRUE(
        stack_->instances().CreateInstance(PlatformStack::Ctx(member_).get(), req, &out).ok());
    stack_->WaitInstance(member_, "shared-nb", [](const instancepb::Instance& i) {
      return i.state() == instancepb::STATE_RUNNING;
    });
  }
  void TearDown() override {
    stack_.reset();
    PgTest::TearDown();
  }

  gpuaas::testing::TempDir dir_;
  std::unique_ptr<PlatformStack> stack_;
  std::string member_;
};

TEST_F(SessionAttackTest, ARemovedMembersTerminalEndsWithinTheBound) {
  const std::string leaver_id =
      stack_->auth().CreateUser("leaver", "studio", common::v1::ROLE_MEMBER);
  const std::string leaver = stack_->auth().Login("leaver", "password-leaver", "studio");
  Terminal theirs(stack_->instance().address(), leaver, "shared-nb");
  Terminal colleague(stack_->instance().address(), member_, "shared-nb");
  ASSERT_TRUE(theirs.Type("echo in$((1+1))\r", "in2"));
  ASSERT_TRUE(colleague.Type("echo in$((2+2))\r", "in4"));

  stack_->auth().RemoveMember("studio", leaver_id);
  const auto removed = std::chrono::steady_clock::now();
  // The shell keeps taking keys until the re-check closes it; then nothing more runs.
  const grpc::Status end = theirs.End();
  EXPECT_FALSE(end.ok());
  EXPECT_LT(std::chrono::steady_clock::now() - removed, std::chrono::seconds(10));
  EXPECT_TRUE(colleague.Type("echo still$((3+3))\r", "still6"));
}

TEST_F(SessionAttackTest, AStoppedInstancesTerminalEnds) {
  Terminal open(stack_->instance().address(), member_, "shared-nb");
  ASSERT_TRUE(open.Type("echo up$((1+1))\r", "up2"));
  instancepb::StopInstanceRequest stop;
  stop.set_instance_id("shared-nb");
  instancepb::Instance out;
  ASSERT_TRUE(stack_->instances().StopInstance(PlatformStack::Ctx(member_).get(), stop, &out).ok());
  EXPECT_FALSE(open.End().ok());
}

}  // namespace
}  // namespace gpuaas::security
