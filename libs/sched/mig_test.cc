// NVIDIA's MIG placement tables and their use by the Scheduler.
#include "libs/sched/mig.h"

#include <memory>

#include "gtest/gtest.h"
#include "libs/sched/scheduler.h"

namespace gpuaas::sched {
namespace {

TEST(MigTables, ProfilesAndStarts) {
  const MigGeometry* a100 = FindMigGeometry("A100-40GB");
  ASSERT_NE(a100, nullptr);
  EXPECT_EQ(a100->total_slices, 8);
  const MigProfile* p3 = FindMigProfile(*a100, "3g.20gb");
  ASSERT_NE(p3, nullptr);
  EXPECT_EQ(p3->slices, 4);
  EXPECT_EQ(p3->start_mask, 0b00010001);
  EXPECT_EQ(FindMigProfile(*a100, "4g.20gb")->start_mask, 0b1);
  EXPECT_EQ(FindMigProfile(*a100, "1g.5gb")->start_mask, 0b01111111);
  EXPECT_EQ(FindMigProfile(*a100, "2g.10gb")->start_mask, 0b00010101);
  EXPECT_EQ(FindMigProfile(*a100, "1g.10gb")->start_mask, 0b01010101);
  EXPECT_EQ(FindMigProfile(*a100, "7g.40gb")->slices, 8);
  EXPECT_EQ(FindMigProfile(*a100, "3g.40gb"), nullptr);
  EXPECT_NE(FindMigProfile(*FindMigGeometry("A100-80GB"), "3g.40gb"), nullptr);
  EXPECT_NE(FindMigProfile(*FindMigGeometry("H100-80GB"), "7g.80gb"), nullptr);
  EXPECT_EQ(FindMigGeometry("NVIDIA A100-SXM4-80GB")->model, "A100-80GB");
  EXPECT_EQ(FindMigGeometry("NVIDIA H100 80GB HBM3")->model, "H100-80GB");
  const MigGeometry* a30 = FindMigGeometry("A30");
  ASSERT_NE(a30, nullptr);
  EXPECT_EQ(a30->total_slices, 4);
  EXPECT_EQ(FindMigProfile(*a30, "2g.12gb")->start_mask, 0b101);
  EXPECT_EQ(FindMigGeometry("T4"), nullptr);
}

TEST(MigTables, ChooseStartKeepsBigProfilesPossible) {
  const MigGeometry& a100 = *FindMigGeometry("A100-40GB");
  // A 1g instance at slice 6 still leaves 4g at 0 and 3g at 0; at slice 0 it would not.
  EXPECT_EQ(ChooseMigStart(a100, *FindMigProfile(a100, "1g.5gb"), 0xFF), 6);
  EXPECT_EQ(ChooseMigStart(a100, *FindMigProfile(a100, "4g.20gb"), 0xF0), -1);
  EXPECT_EQ(ChooseMigStart(a100, *FindMigProfile(a100, "3g.20gb"), 0xF0), 4);
  EXPECT_EQ(ChooseMigStart(a100, *FindMigProfile(a100, "7g.40gb"), 0x7F), -1);
  // Slice 7 alone takes no 1g instance: 1g starts stop at 6.
  EXPECT_EQ(ChooseMigStart(a100, *FindMigProfile(a100, "1g.5gb"), 0x80), -1);
}

class MigScheduler : public ::testing::Test {
 protected:
  void Add(const std::string& model, int gpus = 1) {
    NodeSpec n{.name = "n", .cpu_milli = 64000, .memory_bytes = int64_t{1} << 40};
    for (int i = 0; i < gpus; ++i) {
      n.gpus.push_back(GpuSpec{.index = i, .model = model, .mig_enabled = true});
    }
    ASSERT_TRUE(s_->AddNode(n).ok());
  }
  absl::StatusOr<Placement> Mig(const std::string& profile) {
    return s_->Place(Request{.cpu_milli = 100, .gpu_count = 1, .mig_profile = profile});
  }
  std::unique_ptr<Scheduler> s_ = *Scheduler::Create({});
};

TEST_F(MigScheduler, A100SevenSmallInstancesThenFull) {
  Add("A100-40GB");
  for (int i = 0; i < 7; ++i) {
    ASSERT_TRUE(Mig("1g.5gb").ok()) << i;
  }
  EXPECT_FALSE(Mig("1g.5gb").ok());
  EXPECT_EQ(s_->Explain(Request{.gpu_count = 1, .mig_profile = "1g.5gb"})->mig, 1);
}

TEST_F(MigScheduler, A100FourPlusThree) {
  Add("A100-40GB");
  auto four = Mig("4g.20gb");
  ASSERT_TRUE(four.ok());
  EXPECT_EQ(four->mig->start_slice, 0);
  auto three = Mig("3g.20gb");
  ASSERT_TRUE(three.ok());
  EXPECT_EQ(three->mig->start_slice, 4);
  EXPECT_FALSE(Mig("1g.5gb").ok());
  ASSERT_TRUE(s_->Release(*four).ok());
  EXPECT_FALSE(Mig("7g.40gb").ok());
  ASSERT_TRUE(s_->Release(*three).ok());
  EXPECT_TRUE(Mig("7g.40gb").ok());
}

TEST_F(MigScheduler, A100ThreeTwoGThenOneG) {
  Add("A100-40GB");
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(Mig("2g.10gb").ok());
  }
  EXPECT_FALSE(Mig("2g.10gb").ok());
  auto one = Mig("1g.5gb");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->mig->start_slice, 6);
}

TEST_F(MigScheduler, A30AndH100) {
  Add("A30");
  ASSERT_TRUE(Mig("2g.12gb").ok());
  ASSERT_TRUE(Mig("1g.6gb").ok());
  ASSERT_TRUE(Mig("1g.6gb").ok());
  EXPECT_FALSE(Mig("1g.6gb").ok());
  EXPECT_FALSE(Mig("3g.20gb").ok());  // not an A30 profile
}

TEST_F(MigScheduler, H100FullGpuProfile) {
  Add("H100-80GB");
  ASSERT_TRUE(Mig("7g.80gb").ok());
  EXPECT_FALSE(Mig("1g.10gb").ok());
}

TEST_F(MigScheduler, MigAndSharesDoNotMix) {
  Add("A100-80GB");
  EXPECT_FALSE(s_->Place(Request{.gpu_count = 1, .gpu_milli = 100}).ok());
  NodeSpec plain{.name = "plain", .cpu_milli = 1000, .gpus = {GpuSpec{.model = "A100-80GB"}}};
  ASSERT_TRUE(s_->AddNode(plain).ok());
  auto p = Mig("3g.40gb");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->node, "n");
  NodeSpec bad{.name = "bad", .gpus = {GpuSpec{.model = "T4", .mig_enabled = true}}};
  EXPECT_EQ(s_->AddNode(bad).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gpuaas::sched
