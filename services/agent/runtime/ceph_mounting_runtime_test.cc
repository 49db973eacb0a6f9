#include "services/agent/runtime/ceph_mounting_runtime.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "libs/testing/temp_dir.h"

namespace gpuaas::agent {
namespace {

namespace pb = ::gpuaas::instance::v1;

// Records what it was asked to start; knows what it started.
class FakeRuntime final : public Runtime {
 public:
  absl::Status Start(const pb::Workload& w) override {
    started.push_back(w);
    if (fail_start) return absl::InternalError("no");
    known[w.workload_id()] = true;
    return absl::OkStatus();
  }
  absl::Status Stop(std::string_view) override { return absl::OkStatus(); }
  absl::Status Remove(std::string_view id) override {
    known.erase(std::string(id));
    return absl::OkStatus();
  }
  std::vector<pb::WorkloadStatus> List() const override {
    std::vector<pb::WorkloadStatus> out;
    for (const auto& [id, _] : known) out.emplace_back().set_workload_id(id);
    return out;
  }
  void OnChange(std::function<void()>) override {}

  std::vector<pb::Workload> started;
  std::map<std::string, bool> known;
  bool fail_start = false;
};

pb::Workload CephWorkload() {
  pb::Workload w;
  w.set_workload_id("ins-1.1");
  w.set_instance_id("ins-1");
  pb::Mount* m = w.add_mounts();
  m->set_mount_path("/data");
  m->set_sub_path("models");
  pb::CephVolume* c = m->mutable_ceph();
  c->set_storage_id("models");
  c->add_monitors("v2:127.0.0.1:3300");
  c->set_fs_name("gpuaas");
  c->set_path("/volumes/_nogroup/stu_1/abc");
  c->set_client_id("gpuaas-att-1");
  return w;
}

class CephMountingRuntimeTest : public ::testing::Test {
 protected:
  CephMountingRuntimeTest() {
    auto inner = std::make_unique<FakeRuntime>();
    inner_ = inner.get();
    runtime_ = std::make_unique<CephMountingRuntime>(
        std::move(inner),
        [this](const std::string& storage_id,
               const std::string& instance_id) -> absl::StatusOr<CephKey> {
          fetched_.push_back(storage_id + "/" + instance_id);
          if (!fetch_ok_) return absl::NotFoundError("attachment not found");
          return CephKey{.client_id = key_client_id_, .key = "AQB=="};
        },
        CephMounter{
            .mount =
                [this](const pb::CephVolume& v, const std::string& key, const std::string& at) {
                  std::filesystem::create_directories(at);
                  mounted_.push_back(at);
                  keys_.push_back(key);
                  return absl::OkStatus();
                },
            .unmount =
                [this](const std::string& at) {
                  unmounted_.push_back(at);
                  std::filesystem::remove(at);
                  return absl::OkStatus();
                }},
        (dir_.path() / "ceph").string());
  }

  gpuaas::testing::TempDir dir_;
  FakeRuntime* inner_;
  std::unique_ptr<CephMountingRuntime> runtime_;
  std::vector<std::string> fetched_, mounted_, keys_, unmounted_;
  bool fetch_ok_ = true;
  std::string key_client_id_ = "gpuaas-att-1";
};

TEST_F(CephMountingRuntimeTest, MountsThenStartsWithTheMountpointAsHostPath) {
  ASSERT_TRUE(runtime_->Start(CephWorkload()).ok());
  EXPECT_EQ(fetched_, std::vector<std::string>{"models/ins-1"});
  ASSERT_EQ(mounted_.size(), 1u);
  EXPECT_EQ(keys_[0], "AQB==");
  ASSERT_EQ(inner_->started.size(), 1u);
  const pb::Mount& m = inner_->started[0].mounts(0);
  EXPECT_EQ(m.host_path(), mounted_[0]);
  EXPECT_EQ(m.sub_path(), "models");
  EXPECT_FALSE(m.has_ceph()) << "the inner runtime binds a directory";

  // Started again (the agent's sync repeats): no second mount.
  ASSERT_TRUE(runtime_->Start(CephWorkload()).ok());
  EXPECT_EQ(mounted_.size(), 1u);

  ASSERT_TRUE(runtime_->Remove("ins-1.1").ok());
  EXPECT_EQ(unmounted_, mounted_);
  EXPECT_FALSE(std::filesystem::exists(dir_.path() / "ceph" / "ins-1.1"));
}

TEST_F(CephMountingRuntimeTest, NoKeyNoStart) {
  fetch_ok_ = false;
  EXPECT_TRUE(absl::IsNotFound(runtime_->Start(CephWorkload())));
  EXPECT_TRUE(inner_->started.empty());
  EXPECT_TRUE(mounted_.empty());
}

TEST_F(CephMountingRuntimeTest, AKeyOfAnotherIdIsNotUsed) {
  key_client_id_ = "gpuaas-att-2";
  EXPECT_FALSE(runtime_->Start(CephWorkload()).ok());
  EXPECT_TRUE(mounted_.empty());
  EXPECT_TRUE(inner_->started.empty());
}

TEST_F(CephMountingRuntimeTest, AFailedStartLeavesNothingMounted) {
  inner_->fail_start = true;
  EXPECT_FALSE(runtime_->Start(CephWorkload()).ok());
  EXPECT_EQ(unmounted_, mounted_);
}

TEST_F(CephMountingRuntimeTest, LocalStoragesPassThrough) {
  pb::Workload w;
  w.set_workload_id("ins-2.1");
  w.add_mounts()->set_host_path("/srv/volumes/stu_2");
  ASSERT_TRUE(runtime_->Start(w).ok());
  EXPECT_TRUE(fetched_.empty());
  EXPECT_EQ(inner_->started.at(0).SerializeAsString(), w.SerializeAsString());
}

TEST_F(CephMountingRuntimeTest, RefusesWorkloadIdsThatAreNotNames) {
  pb::Workload w = CephWorkload();
  w.set_workload_id("../x");
  EXPECT_TRUE(absl::IsInvalidArgument(runtime_->Start(w)));
  EXPECT_TRUE(fetched_.empty());
}

}  // namespace
}  // namespace gpuaas::agent
