// Storages over real gRPC with the real local backend: creates idempotent by storage_id and by
// request_id, the tenant's quota on creates and grows (also under concurrent creates), no
// shrinking, usage read from the volume, creates and deletes a crash cut short finished by the
// next start, and tenants who never see each other's storages.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "tests/storage/storage_test_base.h"

namespace gpuaas::storage::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

class StorageStoragesTest : public StorageTest {
 protected:
  void SetUp() override {
    StorageTest::SetUp();
    if (IsSkipped()) return;
    CreateSpec("ssd-1g", "1Gi", 100);
    CreateSpec("ssd-3g", "3Gi", 100);
    CreateSpec("ssd-4g", "4Gi", 100);
    CreateSpec("ssd-6g", "6Gi", 100);
    CreateSpec("ssd-6g-few", "6Gi", 10);  // more bytes, fewer files
  }

  // The storage's identity, which names its volume (read while its row exists).
  std::string Uid(const std::string& storage_id) {
    std::string uid;
    EXPECT_OK(storage_->pool().RunInTransaction("test.uid", [&](db::Tx& tx) {
      std::optional<db::Row> row =
          tx.Exec("SELECT storage_uid FROM storage.storages WHERE storage_id = $1", storage_id)
              .First();
      if (row) uid = row->Get<std::string>(0);
      return absl::OkStatus();
    }));
    EXPECT_FALSE(uid.empty()) << storage_id;
    return uid;
  }
  // The storage's volume directory as the local backend lays it out.
  std::filesystem::path VolumeDir(const std::string& storage_id) {
    return VolumesDir() / Uid(storage_id);
  }
  std::filesystem::path VolumesDir() const {
    return std::filesystem::path(data_root()) / "volumes";
  }

  // Runs `sql` on the service's database, as a crash or an operator would leave things.
  void Exec(const std::string& sql) {
    ASSERT_OK(storage_->pool().RunInTransaction("test.exec", [&](db::Tx& tx) {
      tx.ExecScript(sql);
      return absl::OkStatus();
    }));
  }

  int64_t Reserved(const std::string& tenant) {
    int64_t sum = -1;
    EXPECT_OK(storage_->pool().RunInTransaction("test.reserved", [&](db::Tx& tx) {
      sum = tx.Exec(
                  "SELECT coalesce(sum(size_bytes), 0)::int8 FROM storage.storages "
                  "WHERE tenant_id = $1",
                  tenant)
                .First()
                ->Get<int64_t>(0);
      return absl::OkStatus();
    }));
    return sum;
  }
};

TEST_F(StorageStoragesTest, CreateIsIdempotentByStorageId) {
  pb::Storage first;
  ASSERT_TRUE(CreateStorage(member_, "models", "ssd-1g", &first).ok());
  EXPECT_EQ(first.storage_id(), "models");
  EXPECT_EQ(first.tenant_id(), "alpha");
  EXPECT_EQ(first.state(), pb::STORAGE_STATE_READY);
  EXPECT_EQ(first.size_bytes(), kGiB);
  EXPECT_EQ(first.max_files(), 100);
  EXPECT_EQ(first.backend_class(), "local");
  EXPECT_TRUE(std::filesystem::is_directory(VolumeDir("models")));

  // The same id and request: the first answer, nothing new reserved.
  pb::Storage again;
  ASSERT_TRUE(CreateStorage(member_, "models", "ssd-1g", &again).ok());
  EXPECT_EQ(again.create_time().seconds(), first.create_time().seconds());
  EXPECT_EQ(again.create_time().nanos(), first.create_time().nanos());
  EXPECT_EQ(Reserved("alpha"), kGiB);

  // The same id, another request: refused, in the tenant and across tenants.
  grpc::Status other = CreateStorage(member_, "models", "ssd-3g");
  EXPECT_EQ(other.error_code(), grpc::StatusCode::ALREADY_EXISTS);
  EXPECT_THAT(other.error_message(), StartsWith("storage_id:"));
  EXPECT_EQ(CreateStorage(beta_, "models", "ssd-1g").error_code(),
            grpc::StatusCode::ALREADY_EXISTS);
  EXPECT_EQ(Reserved("beta"), 0);
}

TEST_F(StorageStoragesTest, CreateIsIdempotentByRequestId) {
  pb::CreateStorageRequest req;
  req.set_request_id("req-1");
  req.set_spec_name("ssd-1g");
  req.set_name("my models");
  pb::Storage first, again;
  ASSERT_TRUE(storage_->stub().CreateStorage(Ctx(member_).get(), req, &first).ok());
  EXPECT_THAT(first.storage_id(), StartsWith("stg-"));
  EXPECT_EQ(first.name(), "my models");
  ASSERT_TRUE(storage_->stub().CreateStorage(Ctx(member_).get(), req, &again).ok());
  EXPECT_EQ(again.storage_id(), first.storage_id());
  EXPECT_EQ(Reserved("alpha"), kGiB);

  req.set_spec_name("ssd-3g");
  grpc::Status other = storage_->stub().CreateStorage(Ctx(member_).get(), req, &again);
  EXPECT_EQ(other.error_code(), grpc::StatusCode::ALREADY_EXISTS);
  EXPECT_THAT(other.error_message(), StartsWith("request_id:"));

  // Without either key every call is a new storage.
  req.clear_request_id();
  pb::Storage a, b;
  ASSERT_TRUE(storage_->stub().CreateStorage(Ctx(member_).get(), req, &a).ok());
  ASSERT_TRUE(storage_->stub().CreateStorage(Ctx(member_).get(), req, &b).ok());
  EXPECT_NE(a.storage_id(), b.storage_id());
}

TEST_F(StorageStoragesTest, CreateChecksItsInput) {
  grpc::Status s = CreateStorage(member_, "Models!", "ssd-1g");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), StartsWith("storage_id:"));
  s = CreateStorage(member_, "models", "");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), StartsWith("spec_name:"));
  s = CreateStorage(member_, "models", "no-such-spec");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(s.error_message(), HasSubstr("no-such-spec"));
  // A global role names the tenant.
  s = CreateStorage(service_, "models", "ssd-1g");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), StartsWith("tenant_id:"));
  pb::Storage made;
  ASSERT_TRUE(CreateStorage(service_, "models", "ssd-1g", &made, "alpha").ok());
  EXPECT_EQ(made.tenant_id(), "alpha");
  EXPECT_EQ(CreateStorage(admin_, "archive", "ssd-1g", nullptr, "no-such-tenant").error_code(),
            grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(CreateStorage(viewer_, "archive", "ssd-1g").error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
}

TEST_F(StorageStoragesTest, QuotaBoundsCreatesAndGrows) {
  // alpha may reserve 10 GiB.
  ASSERT_TRUE(CreateStorage(member_, "one", "ssd-4g").ok());
  ASSERT_TRUE(CreateStorage(member_, "two", "ssd-4g").ok());
  grpc::Status over = CreateStorage(member_, "three", "ssd-4g");
  EXPECT_EQ(over.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(over.error_message(), HasSubstr("max_storage_bytes"));
  EXPECT_THAT(over.error_message(), HasSubstr("alpha"));
  // No volume but the two storages'.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(VolumesDir()),
                          std::filesystem::directory_iterator()),
            2);
  // beta's quota is its own.
  EXPECT_TRUE(CreateStorage(beta_, "three", "ssd-4g").ok());

  // Growing one to 6 GiB fits exactly; past that it does not.
  pb::Storage grown;
  ASSERT_TRUE(Resize(member_, "one", "ssd-6g", &grown).ok());
  EXPECT_EQ(grown.size_bytes(), 6 * kGiB);
  EXPECT_EQ(grown.spec_name(), "ssd-6g");
  EXPECT_EQ(Reserved("alpha"), 10 * kGiB);
  over = Resize(member_, "two", "ssd-6g");
  EXPECT_EQ(over.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(over.error_message(), HasSubstr("max_storage_bytes"));

  // Never smaller, in bytes or in files.
  grpc::Status shrink = Resize(member_, "one", "ssd-4g");
  EXPECT_EQ(shrink.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(shrink.error_message(), HasSubstr("never shrink"));
  EXPECT_EQ(Resize(member_, "two", "ssd-6g-few").error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(Resize(member_, "two", "no-such-spec").error_code(), grpc::StatusCode::NOT_FOUND);

  // A raised quota lets the grow through.
  SetStorageQuota("alpha", 12 * kGiB);
  EXPECT_TRUE(Resize(member_, "two", "ssd-6g").ok());
  EXPECT_EQ(Reserved("alpha"), 12 * kGiB);
}

TEST_F(StorageStoragesTest, ConcurrentCreatesCannotOvershootTheQuota) {
  // 10 GiB holds three 3 GiB storages; eight callers race for them.
  constexpr int kCallers = 8;
  std::atomic<int> created{0}, refused{0}, other{0};
  std::vector<std::thread> callers;
  for (int i = 0; i < kCallers; ++i) {
    callers.emplace_back([&, i] {
      grpc::Status s = CreateStorage(member_, "race-" + std::to_string(i), "ssd-3g");
      if (s.ok()) {
        ++created;
      } else if (s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
        ++refused;
      } else {
        ADD_FAILURE() << s.error_message();
        ++other;
      }
    });
  }
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(created, 3);
  EXPECT_EQ(refused, kCallers - 3);
  EXPECT_EQ(Reserved("alpha"), 9 * kGiB);
}

TEST_F(StorageStoragesTest, GetShowsUsageOfWhatTheVolumeHolds) {
  ASSERT_TRUE(CreateStorage(member_, "models", "ssd-1g").ok());
  pb::Storage s;
  ASSERT_TRUE(GetStorage(viewer_, "models", &s).ok());
  EXPECT_EQ(s.used_bytes(), 0);
  EXPECT_EQ(s.used_files(), 0);
  WriteObject("models", "a.bin", 1000);
  WriteObject("models", "dir/b.bin", 24);
  ASSERT_TRUE(GetStorage(viewer_, "models", &s).ok());
  EXPECT_EQ(s.used_bytes(), 1024);
  EXPECT_EQ(s.used_files(), 2);
  // Lists leave usage to GetStorage.
  pb::ListStoragesResponse list;
  ASSERT_TRUE(storage_->stub().ListStorages(Ctx(viewer_).get(), {}, &list).ok());
  ASSERT_EQ(list.storages_size(), 1);
  EXPECT_EQ(list.storages(0).used_bytes(), 0);
}

TEST_F(StorageStoragesTest, ListFiltersAndRenames) {
  ASSERT_TRUE(CreateStorage(member_, "aaa", "ssd-1g").ok());
  ASSERT_TRUE(CreateStorage(member_, "bbb", "ssd-3g").ok());
  ASSERT_TRUE(CreateStorage(beta_, "ccc", "ssd-1g").ok());
  pb::UpdateStorageRequest rename;
  rename.mutable_storage()->set_storage_id("bbb");
  rename.mutable_storage()->set_name("datasets");
  rename.mutable_update_mask()->add_paths("name");
  pb::Storage renamed;
  ASSERT_TRUE(storage_->stub().UpdateStorage(Ctx(member_).get(), rename, &renamed).ok());
  EXPECT_EQ(renamed.name(), "datasets");
  EXPECT_EQ(renamed.spec_name(), "ssd-3g");

  auto ids = [&](const std::string& token, pb::ListStoragesRequest req) {
    pb::ListStoragesResponse out;
    grpc::Status s = storage_->stub().ListStorages(Ctx(token).get(), req, &out);
    EXPECT_TRUE(s.ok()) << s.error_message();
    std::vector<std::string> got;
    for (const auto& st : out.storages()) got.push_back(st.storage_id());
    return got;
  };
  EXPECT_THAT(ids(viewer_, {}), ::testing::ElementsAre("aaa", "bbb"));
  EXPECT_THAT(ids(beta_, {}), ::testing::ElementsAre("ccc"));
  EXPECT_THAT(ids(admin_, {}), ::testing::ElementsAre("aaa", "bbb", "ccc"));
  pb::ListStoragesRequest by;
  by.set_spec_name("ssd-1g");
  EXPECT_THAT(ids(admin_, by), ::testing::ElementsAre("aaa", "ccc"));
  by.set_tenant_id("alpha");
  EXPECT_THAT(ids(admin_, by), ::testing::ElementsAre("aaa"));
  by.Clear();
  by.set_name("datasets");
  EXPECT_THAT(ids(member_, by), ::testing::ElementsAre("bbb"));
  by.Clear();
  by.set_state(pb::STORAGE_STATE_DELETING);
  EXPECT_THAT(ids(member_, by), ::testing::ElementsAre());
  by.Clear();
  by.set_page_size(1);
  pb::ListStoragesResponse page;
  ASSERT_TRUE(storage_->stub().ListStorages(Ctx(admin_).get(), by, &page).ok());
  ASSERT_EQ(page.storages_size(), 1);
  by.set_page_token(page.next_page_token());
  EXPECT_THAT(ids(admin_, by), ::testing::ElementsAre("bbb"));
}

TEST_F(StorageStoragesTest, DeleteRemovesRowAndVolume) {
  ASSERT_TRUE(CreateStorage(member_, "models", "ssd-1g").ok());
  WriteObject("models", "weights.bin", 4096);
  const std::filesystem::path volume = VolumeDir("models");
  ASSERT_TRUE(DeleteStorage(member_, "models").ok());
  EXPECT_EQ(GetStorage(admin_, "models").error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_FALSE(std::filesystem::exists(volume));
  EXPECT_EQ(DeleteStorage(member_, "models").error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(Reserved("alpha"), 0);
  // The id is free again.
  EXPECT_TRUE(CreateStorage(beta_, "models", "ssd-1g").ok());
}

TEST_F(StorageStoragesTest, ADeleteCutShortIsFinishedByTheNextStart) {
  ASSERT_TRUE(CreateStorage(member_, "models", "ssd-1g").ok());
  ASSERT_TRUE(CreateStorage(member_, "keep", "ssd-1g").ok());
  WriteObject("models", "weights.bin", 4096);
  // What a crash right after the mark leaves: the row DELETING, the volume whole.
  Exec("UPDATE storage.storages SET state = 3 WHERE storage_id = 'models'");
  const std::filesystem::path volume = VolumeDir("models");
  ASSERT_TRUE(std::filesystem::exists(volume / "weights.bin"));
  // Meanwhile it is gone for everyone but a retry of the delete.
  EXPECT_EQ(CreateAccessor(member_, "models").error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(storage_->directory().FindBucket("models").status().code(),
            absl::StatusCode::kNotFound);

  Restart();
  EXPECT_EQ(storage_->resumed_deletes(), 1);
  EXPECT_EQ(GetStorage(admin_, "models").error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_FALSE(std::filesystem::exists(volume));
  EXPECT_TRUE(GetStorage(member_, "keep").ok());
  EXPECT_TRUE(std::filesystem::exists(VolumeDir("keep")));
}

TEST_F(StorageStoragesTest, ADeleteCutShortIsFinishedByItsRetry) {
  ASSERT_TRUE(CreateStorage(member_, "models", "ssd-1g").ok());
  Exec("UPDATE storage.storages SET state = 3 WHERE storage_id = 'models'");
  const std::filesystem::path volume = VolumeDir("models");
  ASSERT_TRUE(DeleteStorage(member_, "models").ok());
  EXPECT_EQ(GetStorage(admin_, "models").error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_FALSE(std::filesystem::exists(volume));
}

TEST_F(StorageStoragesTest, ACreateCutShortIsFinishedByTheNextStart) {
  ASSERT_TRUE(CreateStorage(member_, "models", "ssd-1g").ok());
  // What a crash between the row and the volume leaves: CREATING, no directory.
  Exec("UPDATE storage.storages SET state = 1 WHERE storage_id = 'models'");
  ASSERT_OK(storage_->local_backend()->DeleteVolume(Uid("models")));
  ASSERT_FALSE(std::filesystem::exists(VolumeDir("models")));
  Restart();
  EXPECT_EQ(storage_->resumed_creates(), 1);
  pb::Storage s;
  ASSERT_TRUE(GetStorage(member_, "models", &s).ok());
  EXPECT_EQ(s.state(), pb::STORAGE_STATE_READY);
  EXPECT_TRUE(std::filesystem::is_directory(VolumeDir("models")));
}

TEST_F(StorageStoragesTest, AnotherTenantsStorageIsNotFound) {
  ASSERT_TRUE(CreateStorage(member_, "models", "ssd-1g").ok());
  pb::CreateAccessorResponse key;
  ASSERT_TRUE(CreateAccessor(member_, "models", &key).ok());
  EXPECT_EQ(GetStorage(beta_, "models").error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(Resize(beta_, "models", "ssd-3g").error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(DeleteStorage(beta_, "models").error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(CreateAccessor(beta_, "models").error_code(), grpc::StatusCode::NOT_FOUND);
  pb::ListAccessorsRequest list;
  list.set_storage_id("models");
  pb::ListAccessorsResponse listed;
  EXPECT_EQ(storage_->stub().ListAccessors(Ctx(beta_).get(), list, &listed).error_code(),
            grpc::StatusCode::NOT_FOUND);
  pb::DeleteAccessorRequest revoke;
  revoke.set_access_key_id(key.access_key_id());
  pb::DeleteAccessorResponse revoked;
  EXPECT_EQ(storage_->stub().DeleteAccessor(Ctx(beta_).get(), revoke, &revoked).error_code(),
            grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(CreateStorage(beta_, "stolen", "ssd-1g", nullptr, "alpha").error_code(),
            grpc::StatusCode::NOT_FOUND);
  pb::ListStoragesRequest theirs;
  theirs.set_tenant_id("alpha");
  pb::ListStoragesResponse out;
  EXPECT_EQ(storage_->stub().ListStorages(Ctx(beta_).get(), theirs, &out).error_code(),
            grpc::StatusCode::NOT_FOUND);
  // Nothing changed for alpha.
  EXPECT_TRUE(GetStorage(member_, "models").ok());
  EXPECT_TRUE(storage_->directory().FindAccessKey(key.access_key_id()).ok());
}

}  // namespace
}  // namespace gpuaas::storage::testing
