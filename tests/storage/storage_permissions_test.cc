// Every StorageService RPC × every role, from the tenant the caller acts in and from another:
// specs are platform resources (every role reads, platform admins write); storages and
// accessors are alpha's (its viewers read, its members and tenant admins and the global roles
// write, another tenant finds nothing; snapshots likewise); attachments are for services and
// platform admins.
#include <gtest/gtest.h>

#include <functional>

#include "libs/testing/permission_matrix.h"
#include "tests/storage/storage_test_base.h"

namespace gpuaas::storage::testing {
namespace {

using auth::testing::AuthStack;
using gpuaas::testing::CallerKind;
using gpuaas::testing::MatrixCaller;
using gpuaas::testing::MatrixRow;
using gpuaas::testing::RunPermissionMatrix;
using grpc::StatusCode;

using StoragePermissionsTest = StorageTest;

constexpr StatusCode OK = StatusCode::OK;
constexpr StatusCode PD = StatusCode::PERMISSION_DENIED;
constexpr StatusCode NF = StatusCode::NOT_FOUND;
// This stack's storages are the local backend's, which has no snapshots: a caller who may take
// or list them gets as far as the backend, and its UNIMPLEMENTED. (storage_ceph_test.cc takes
// real ones.)
constexpr StatusCode UN = StatusCode::UNIMPLEMENTED;

TEST_F(StoragePermissionsTest, EveryRoleOnEveryRpc) {
  stack_->CreateUser("tadmin", "alpha", common::v1::ROLE_TENANT_ADMIN);
  const std::vector<MatrixCaller> callers = {
      {"viewer", viewer_, CallerKind::kViewer},
      {"member", member_, CallerKind::kUser},
      {"tenant-admin", stack_->Login("tadmin", AuthStack::PasswordOf("tadmin")), CallerKind::kUser},
      {"other tenant's admin", beta_, CallerKind::kOther},
      {"service acting in a tenant",
       stack_->Login("robot", AuthStack::PasswordOf("robot"), "alpha"), CallerKind::kService},
      {"service", service_, CallerKind::kService},
      {"platform-admin", admin_, CallerKind::kPlatform},
      {"gateway",
       stack_->ExchangeApiKey(stack_->CreateApiKey(admin_, "gateway", common::v1::ROLE_GATEWAY)),
       CallerKind::kGateway},
  };
  CreateSpec("ssd-1m", "1Mi", 100);
  ASSERT_TRUE(CreateStorage(member_, "shared", "ssd-1m").ok());

  // Resources a destructive call consumes, made fresh for call `n` by the admin.
  const auto fresh_storage = [&](int n) {
    const std::string id = "victim-" + std::to_string(n);
    EXPECT_TRUE(CreateStorage(admin_, id, "ssd-1m", nullptr, "alpha").ok()) << id;
    return id;
  };
  const auto fresh_accessor = [&](int n) {
    pb::CreateAccessorResponse out;
    EXPECT_TRUE(CreateAccessor(admin_, "shared", &out).ok()) << n;
    return out.access_key_id();
  };

  auto& stub = storage_->stub();
  const std::vector<MatrixRow> rows = {
      {"CreateStorageSpec",
       [&](const std::string& t, int n) {
         pb::CreateStorageSpecRequest r;
         r.mutable_spec()->set_spec_name("spec-" + std::to_string(n));
         r.mutable_spec()->set_size("1Gi");
         r.mutable_spec()->set_max_files(10);
         pb::StorageSpec out;
         return stub.CreateStorageSpec(Ctx(t).get(), r, &out);
       },
       PD, PD, PD, PD, OK},
      {"GetStorageSpec",
       [&](const std::string& t, int) {
         pb::GetStorageSpecRequest r;
         r.set_spec_name("ssd-1m");
         pb::StorageSpec out;
         return stub.GetStorageSpec(Ctx(t).get(), r, &out);
       },
       OK, OK, OK, OK, OK},
      {"ListStorageSpecs",
       [&](const std::string& t, int) {
         pb::ListStorageSpecsResponse out;
         return stub.ListStorageSpecs(Ctx(t).get(), {}, &out);
       },
       OK, OK, OK, OK, OK},
      {"UpdateStorageSpec",
       [&](const std::string& t, int n) {
         pb::UpdateStorageSpecRequest r;
         r.mutable_spec()->set_spec_name("ssd-1m");
         r.mutable_spec()->set_description("call " + std::to_string(n));
         r.mutable_update_mask()->add_paths("description");
         pb::StorageSpec out;
         return stub.UpdateStorageSpec(Ctx(t).get(), r, &out);
       },
       PD, PD, PD, PD, OK},
      {"DeleteStorageSpec",
       [&](const std::string& t, int n) {
         const std::string name = "gone-" + std::to_string(n);
         CreateSpec(name, "1Gi");
         pb::DeleteStorageSpecRequest r;
         r.set_spec_name(name);
         pb::DeleteStorageSpecResponse out;
         return stub.DeleteStorageSpec(Ctx(t).get(), r, &out);
       },
       PD, PD, PD, PD, OK},
      {"CreateStorage",
       [&](const std::string& t, int n) {
         return CreateStorage(t, "made-" + std::to_string(n), "ssd-1m", nullptr, "alpha");
       },
       PD, OK, NF, OK, OK, PD, PD, NF},
      {"GetStorage", [&](const std::string& t, int) { return GetStorage(t, "shared"); }, OK, OK, NF,
       OK, OK},
      {"ListStorages",
       [&](const std::string& t, int) {
         pb::ListStoragesRequest r;
         r.set_tenant_id("alpha");
         pb::ListStoragesResponse out;
         return stub.ListStorages(Ctx(t).get(), r, &out);
       },
       OK, OK, NF, OK, OK},
      {"UpdateStorage",
       [&](const std::string& t, int n) {
         pb::UpdateStorageRequest r;
         r.mutable_storage()->set_storage_id("shared");
         r.mutable_storage()->set_name("renamed " + std::to_string(n));
         r.mutable_update_mask()->add_paths("name");
         pb::Storage out;
         return stub.UpdateStorage(Ctx(t).get(), r, &out);
       },
       PD, OK, NF, OK, OK},
      {"DeleteStorage",
       [&](const std::string& t, int n) { return DeleteStorage(t, fresh_storage(n)); }, PD, OK, NF,
       OK, OK},
      {"AttachStorage",
       [&](const std::string& t, int n) {
         pb::AttachStorageRequest r;
         r.set_storage_id("shared");
         r.set_tenant_id("alpha");
         r.set_instance_id("ins-" + std::to_string(n));
         r.set_node_id("node-1");
         r.set_read_only(true);
         pb::Attachment out;
         return stub.AttachStorage(Ctx(t).get(), r, &out);
       },
       PD, PD, PD, OK, OK},
      {"DetachStorage",
       [&](const std::string& t, int n) {
         pb::DetachStorageRequest r;
         r.set_storage_id("shared");
         r.set_instance_id("ins-" + std::to_string(n));
         pb::DetachStorageResponse out;
         return stub.DetachStorage(Ctx(t).get(), r, &out);
       },
       PD, PD, PD, OK, OK},
      {"CreateAccessor", [&](const std::string& t, int) { return CreateAccessor(t, "shared"); }, PD,
       OK, NF, OK, OK},
      {"ListAccessors",
       [&](const std::string& t, int) {
         pb::ListAccessorsRequest r;
         r.set_storage_id("shared");
         pb::ListAccessorsResponse out;
         return stub.ListAccessors(Ctx(t).get(), r, &out);
       },
       OK, OK, NF, OK, OK},
      {"DeleteAccessor",
       [&](const std::string& t, int n) {
         pb::DeleteAccessorRequest r;
         r.set_access_key_id(fresh_accessor(n));
         pb::DeleteAccessorResponse out;
         return stub.DeleteAccessor(Ctx(t).get(), r, &out);
       },
       PD, OK, NF, OK, OK},
      {"CreateSnapshot",
       [&](const std::string& t, int n) {
         pb::CreateSnapshotRequest r;
         r.set_storage_id("shared");
         r.set_snapshot_id("snap-" + std::to_string(n));
         pb::Snapshot out;
         return stub.CreateSnapshot(Ctx(t).get(), r, &out);
       },
       PD, UN, NF, UN, UN},
      {"ListSnapshots",
       [&](const std::string& t, int) {
         pb::ListSnapshotsRequest r;
         r.set_storage_id("shared");
         pb::ListSnapshotsResponse out;
         return stub.ListSnapshots(Ctx(t).get(), r, &out);
       },
       UN, UN, NF, UN, UN},
      {"DeleteSnapshot",
       [&](const std::string& t, int n) {
         pb::DeleteSnapshotRequest r;
         r.set_storage_id("shared");
         r.set_snapshot_id("snap-" + std::to_string(n));
         pb::DeleteSnapshotResponse out;
         return stub.DeleteSnapshot(Ctx(t).get(), r, &out);
       },
       PD, UN, NF, UN, UN},
  };
  // Every RPC of the service has a row: a new RPC without one fails here.
  RunPermissionMatrix(
      rows, callers,
      static_cast<size_t>(pb::Storage::descriptor()->file()->service(0)->method_count()));
}

}  // namespace
}  // namespace gpuaas::storage::testing
