// Storage specs through their life over real gRPC: create (idempotent by name, sizes compared by
// value), get, list in pages, update of price and description only, delete refused while a
// storage uses the spec; bad input named by field; unknown backends refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/storage/storage_test_base.h"

namespace gpuaas::storage::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

class StorageSpecsTest : public StorageTest {
 protected:
  pb::StorageSpec Spec(const std::string& name, const std::string& size = "10Gi") {
    pb::StorageSpec s;
    s.set_spec_name(name);
    s.set_size(size);
    s.set_max_files(100000);
    s.set_price_per_gb_hour_micros(40);
    s.set_description("fast disk");
    return s;
  }
  grpc::Status Create(const pb::StorageSpec& spec, pb::StorageSpec* out = nullptr,
                      const std::string& token = "") {
    pb::CreateStorageSpecRequest req;
    *req.mutable_spec() = spec;
    pb::StorageSpec ignored;
    return storage_->stub().CreateStorageSpec(Ctx(token.empty() ? admin_ : token).get(), req,
                                              out ? out : &ignored);
  }
};

TEST_F(StorageSpecsTest, CreateGetListUpdateDelete) {
  pb::StorageSpec created;
  ASSERT_TRUE(Create(Spec("ssd-10g", "10240Mi"), &created).ok());
  EXPECT_EQ(created.size(), "10Gi");
  EXPECT_EQ(created.size_bytes(), 10 * kGiB);
  EXPECT_EQ(created.backend_class(), "local");
  EXPECT_TRUE(created.has_create_time());

  // The same spec again, spelled differently, is the stored one; other values are refused.
  pb::StorageSpec again;
  ASSERT_TRUE(Create(Spec("ssd-10g", "10Gi"), &again).ok());
  EXPECT_EQ(again.create_time().seconds(), created.create_time().seconds());
  pb::StorageSpec other = Spec("ssd-10g", "20Gi");
  EXPECT_EQ(Create(other).error_code(), grpc::StatusCode::ALREADY_EXISTS);

  for (const char* name : {"ssd-1g", "ssd-2g", "ssd-3g"}) ASSERT_TRUE(Create(Spec(name)).ok());
  pb::ListStorageSpecsRequest list;
  list.set_page_size(3);
  pb::ListStorageSpecsResponse page;
  ASSERT_TRUE(storage_->stub().ListStorageSpecs(Ctx(viewer_).get(), list, &page).ok());
  ASSERT_EQ(page.specs_size(), 3);
  EXPECT_EQ(page.specs(0).spec_name(), "ssd-10g");
  list.set_page_token(page.next_page_token());
  ASSERT_TRUE(storage_->stub().ListStorageSpecs(Ctx(viewer_).get(), list, &page).ok());
  ASSERT_EQ(page.specs_size(), 1);
  EXPECT_EQ(page.specs(0).spec_name(), "ssd-3g");
  EXPECT_EQ(page.next_page_token(), "");

  pb::UpdateStorageSpecRequest update;
  update.mutable_spec()->set_spec_name("ssd-10g");
  update.mutable_spec()->set_price_per_gb_hour_micros(55);
  update.mutable_spec()->set_size("1Ti");  // not in the mask: ignored
  update.mutable_update_mask()->add_paths("price_per_gb_hour_micros");
  pb::StorageSpec updated;
  ASSERT_TRUE(storage_->stub().UpdateStorageSpec(Ctx(admin_).get(), update, &updated).ok());
  EXPECT_EQ(updated.price_per_gb_hour_micros(), 55);
  EXPECT_EQ(updated.size(), "10Gi");
  EXPECT_EQ(updated.description(), "fast disk");
  update.mutable_update_mask()->set_paths(0, "size");
  grpc::Status bad_mask = storage_->stub().UpdateStorageSpec(Ctx(admin_).get(), update, &updated);
  EXPECT_EQ(bad_mask.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(bad_mask.error_message(), StartsWith("update_mask"));

  pb::GetStorageSpecRequest get;
  get.set_spec_name("ssd-10g");
  pb::StorageSpec got;
  ASSERT_TRUE(storage_->stub().GetStorageSpec(Ctx(member_).get(), get, &got).ok());
  EXPECT_EQ(got.price_per_gb_hour_micros(), 55);

  pb::DeleteStorageSpecRequest del;
  del.set_spec_name("ssd-10g");
  pb::DeleteStorageSpecResponse deleted;
  ASSERT_TRUE(storage_->stub().DeleteStorageSpec(Ctx(admin_).get(), del, &deleted).ok());
  EXPECT_EQ(storage_->stub().GetStorageSpec(Ctx(admin_).get(), get, &got).error_code(),
            grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(storage_->stub().DeleteStorageSpec(Ctx(admin_).get(), del, &deleted).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST_F(StorageSpecsTest, BadInputIsNamedByField) {
  struct Case {
    std::function<void(pb::StorageSpec&)> change;
    std::string field;
  };
  const std::vector<Case> cases = {
      {[](pb::StorageSpec& s) { s.set_spec_name("Bad Name"); }, "spec.spec_name"},
      {[](pb::StorageSpec& s) { s.clear_size(); }, "spec.size"},
      {[](pb::StorageSpec& s) { s.set_size("10GB"); }, "spec.size"},
      {[](pb::StorageSpec& s) { s.set_size("0"); }, "spec.size"},
      {[](pb::StorageSpec& s) { s.set_max_files(0); }, "spec.max_files"},
      {[](pb::StorageSpec& s) { s.set_price_per_gb_hour_micros(-1); },
       "spec.price_per_gb_hour_micros"},
      {[](pb::StorageSpec& s) { s.set_description(std::string(300, 'x')); }, "spec.description"},
      {[](pb::StorageSpec& s) { s.set_backend_class("Ceph!"); }, "spec.backend_class"},
  };
  for (const Case& c : cases) {
    pb::StorageSpec spec = Spec("ssd-bad");
    c.change(spec);
    grpc::Status s = Create(spec);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << c.field;
    EXPECT_THAT(s.error_message(), StartsWith(c.field + ":"));
  }
  pb::GetStorageSpecRequest get;
  get.set_spec_name("x");
  pb::StorageSpec out;
  grpc::Status s = storage_->stub().GetStorageSpec(Ctx(admin_).get(), get, &out);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), StartsWith("spec_name:"));
}

TEST_F(StorageSpecsTest, ABackendThisServerLacksIsRefused) {
  pb::StorageSpec spec = Spec("ceph-1t", "1Ti");
  spec.set_backend_class("cephfs");
  grpc::Status s = Create(spec);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(s.error_message(), HasSubstr("cephfs"));
  EXPECT_THAT(s.error_message(), HasSubstr("local"));
}

TEST_F(StorageSpecsTest, DeleteIsRefusedWhileStoragesUseTheSpec) {
  ASSERT_TRUE(Create(Spec("ssd-1g", "1Gi")).ok());
  ASSERT_TRUE(CreateStorage(member_, "models", "ssd-1g").ok());
  pb::DeleteStorageSpecRequest del;
  del.set_spec_name("ssd-1g");
  pb::DeleteStorageSpecResponse out;
  grpc::Status s = storage_->stub().DeleteStorageSpec(Ctx(admin_).get(), del, &out);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(s.error_message(), HasSubstr("used by 1 storage"));
  ASSERT_TRUE(DeleteStorage(member_, "models").ok());
  EXPECT_TRUE(storage_->stub().DeleteStorageSpec(Ctx(admin_).get(), del, &out).ok());
}

}  // namespace
}  // namespace gpuaas::storage::testing
