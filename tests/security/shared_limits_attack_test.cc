// Shared pools a tenant might take from the others: log streams. A tenant holds open as many
// follow streams of its own instances' logs as the platform lets it; another tenant's
// instance on the same node must still get its logs. Real agent, real sandboxed workloads,
// the instance service's relay.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "libs/testing/pg_test.h"
#include "libs/testing/temp_dir.h"
#include "tests/platform/platform_stack.h"

namespace gpuaas::platform_testing {
namespace {

// A follow stream of one instance's logs, held open until destroyed.
class HeldStream {
 public:
  HeldStream(PlatformStack& stack, const std::string& token, const std::string& instance_id)
      : ctx_(PlatformStack::Ctx(token)) {
    instancepb::GetInstanceLogsRequest req;
    req.set_instance_id(instance_id);
    req.set_tail_lines(1);
    req.set_follow(true);
    reader_ = stack.instances().GetInstanceLogs(ctx_.get(), req);
    instancepb::LogChunk chunk;
    open_ = reader_->Read(&chunk);  // the tail arrives once the relay to the agent is up
    if (!open_) {
      status_ = reader_->Finish();
    }
  }
  ~HeldStream() {
    if (open_) {
      ctx_->TryCancel();
      reader_->Finish();
    }
  }

  bool open() const { return open_; }
  const grpc::Status& status() const { return status_; }

 private:
  std::unique_ptr<grpc::ClientContext> ctx_;
  std::unique_ptr<grpc::ClientReader<instancepb::LogChunk>> reader_;
  bool open_ = false;
  grpc::Status status_;
};

class SharedLimitsAttackTest : public gpuaas::testing::PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped()) return;
    stack_ = std::make_unique<PlatformStack>(dsn(), dir_.path());
    mallory_ = stack_->CreateTenant("mallory");
    victim_ = stack_->CreateTenant("victim");
    stack_->CreateSpecWithStocks("a100.tenth", "A100-80GB", 1, 100, 8);
    for (int i = 0; i < kMalloryInstances; ++i) Start(mallory_, absl::StrCat("m-", i));
    Start(victim_, "v-0");
    for (int i = 0; i < kMalloryInstances; ++i) WaitRunning(mallory_, absl::StrCat("m-", i));
    WaitRunning(victim_, "v-0");
  }
  void TearDown() override {
    held_.clear();
    stack_.reset();
    PgTest::TearDown();
  }

  void Start(const std::string& token, const std::string& id) {
    instancepb::CreateInstanceRequest req;
    req.set_instance_id(id);
    req.set_spec_name("a100.tenth");
    req.mutable_template_()->set_cmd("while true; do echo tick; sleep 1; done");
    instancepb::Instance out;
    grpc::Status s = stack_->instances().CreateInstance(PlatformStack::Ctx(token).get(), req, &out);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  void WaitRunning(const std::string& token, const std::string& id) {
    EXPECT_EQ(stack_
                  ->WaitInstance(token, id,
                                 [](const instancepb::Instance& i) {
                                   return i.state() == instancepb::STATE_RUNNING;
                                 })
                  .state(),
              instancepb::STATE_RUNNING);
  }

  // Opens follow streams of `id` as Mallory until one is refused (or `most` are open); returns
  // how many opened and keeps them open.
  int HoldUntilRefused(const std::string& id, int most, grpc::Status* refusal) {
    for (int opened = 0; opened < most; ++opened) {
      auto stream = std::make_unique<HeldStream>(*stack_, mallory_, id);
      if (!stream->open()) {
        *refusal = stream->status();
        return opened;
      }
      held_.push_back(std::move(stream));
    }
    return most;
  }

  static constexpr int kMalloryInstances = 5;
  gpuaas::testing::TempDir dir_;
  std::unique_ptr<PlatformStack> stack_;
  std::string mallory_;
  std::string victim_;
  std::vector<std::unique_ptr<HeldStream>> held_;
};

TEST_F(SharedLimitsAttackTest, ATenantCannotTakeEveryLogStream) {
  // One instance's streams are capped at its node's agent...
  grpc::Status refusal;
  EXPECT_EQ(HoldUntilRefused("m-0", 100, &refusal), 8);
  EXPECT_EQ(refusal.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << refusal.error_message();
  // ...and a tenant's, over all its instances, at the instance service.
  for (int i = 1; i < kMalloryInstances - 1; ++i) {
    EXPECT_EQ(HoldUntilRefused(absl::StrCat("m-", i), 8, &refusal), 8);
  }
  EXPECT_EQ(HoldUntilRefused(absl::StrCat("m-", kMalloryInstances - 1), 100, &refusal), 0);
  EXPECT_EQ(refusal.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << refusal.error_message();
  EXPECT_NE(refusal.error_message().find("per tenant"), std::string::npos)
      << refusal.error_message();

  // The other tenant, on the same node, still reads its instance's logs.
  HeldStream victims(*stack_, victim_, "v-0");
  EXPECT_TRUE(victims.open()) << victims.status().error_message();
}

}  // namespace
}  // namespace gpuaas::platform_testing
