#include "tests/storage/storage_test_base.h"

#include "libs/testing/status_matchers.h"
#include "services/storage/ceph/test_cluster.h"

namespace gpuaas::storage::testing {

using auth::testing::AuthStack;

std::string VolumeBackendName(VolumeBackend backend) {
  return backend == VolumeBackend::kCeph ? "ceph" : "local";
}

void StorageTest::StartStorage() {
  if (backend_ == VolumeBackend::kLocal) {
    storage_ = std::make_unique<StorageStack>(dsn(), stack_->address(), data_root(), secret_key_);
    return;
  }
  ASSERT_OK_AND_ASSIGN(const ceph::ClusterOptions cluster, ceph::TestClusterOptions());
  storage_ = std::make_unique<StorageStack>(dsn(), stack_->address(), data_root(), secret_key_,
                                            "directory", [&](StorageAppOptions& o) {
                                              o.ceph_conf = cluster.conf_path;
                                              o.ceph_keyring = cluster.keyring_path;
                                              o.sync_writes = true;
                                            });
  ASSERT_NE(storage_->ceph_backend(), nullptr);
}

void StorageTest::SetUp() {
  AuthStackTest::SetUp();
  if (IsSkipped()) return;
  secret_key_ = std::string(SecretBox::kKeyBytes, '\x5a');
  StartStorage();
  if (HasFatalFailure()) return;
  stack_->CreateTenant("alpha");
  stack_->CreateTenant("beta");
  SetStorageQuota("alpha", 10 * kGiB);
  SetStorageQuota("beta", 10 * kGiB);
  stack_->CreateUser("member", "alpha", common::v1::ROLE_MEMBER);
  stack_->CreateUser("viewer", "alpha", common::v1::ROLE_VIEWER);
  stack_->CreateUser("beta-admin", "beta", common::v1::ROLE_TENANT_ADMIN);
  stack_->CreateServiceUser("robot");
  member_ = stack_->Login("member", AuthStack::PasswordOf("member"));
  viewer_ = stack_->Login("viewer", AuthStack::PasswordOf("viewer"));
  beta_ = stack_->Login("beta-admin", AuthStack::PasswordOf("beta-admin"));
  service_ = stack_->Login("robot", AuthStack::PasswordOf("robot"));
}

void StorageTest::TearDown() {
  storage_.reset();
  AuthStackTest::TearDown();
}

void StorageTest::Restart() {
  storage_.reset();
  StartStorage();
}

void StorageTest::SetStorageQuota(const std::string& tenant_id, int64_t bytes) {
  auth::v1::UpdateTenantRequest req;
  req.mutable_tenant()->set_tenant_id(tenant_id);
  req.mutable_tenant()->mutable_quota()->set_max_storage_bytes(bytes);
  req.mutable_update_mask()->add_paths("quota.max_storage_bytes");
  auth::v1::Tenant out;
  grpc::Status s = stub().UpdateTenant(Ctx(admin_).get(), req, &out);
  ASSERT_TRUE(s.ok()) << s.error_message();
}

void StorageTest::CreateSpec(const std::string& name, const std::string& size, int64_t max_files) {
  pb::CreateStorageSpecRequest req;
  req.mutable_spec()->set_spec_name(name);
  req.mutable_spec()->set_size(size);
  req.mutable_spec()->set_max_files(max_files);
  req.mutable_spec()->set_price_per_gb_hour_micros(40);
  if (backend_ == VolumeBackend::kCeph) req.mutable_spec()->set_backend_class("ceph");
  pb::StorageSpec out;
  grpc::Status s = storage_->stub().CreateStorageSpec(Ctx(admin_).get(), req, &out);
  ASSERT_TRUE(s.ok()) << name << ": " << s.error_message();
}

grpc::Status StorageTest::CreateStorage(const std::string& token, const std::string& storage_id,
                                        const std::string& spec, pb::Storage* out,
                                        const std::string& tenant_id) {
  pb::CreateStorageRequest req;
  req.set_storage_id(storage_id);
  req.set_spec_name(spec);
  req.set_tenant_id(tenant_id);
  pb::Storage ignored;
  return storage_->stub().CreateStorage(Ctx(token).get(), req, out ? out : &ignored);
}

grpc::Status StorageTest::GetStorage(const std::string& token, const std::string& storage_id,
                                     pb::Storage* out) {
  pb::GetStorageRequest req;
  req.set_storage_id(storage_id);
  pb::Storage ignored;
  return storage_->stub().GetStorage(Ctx(token).get(), req, out ? out : &ignored);
}

grpc::Status StorageTest::Resize(const std::string& token, const std::string& storage_id,
                                 const std::string& spec, pb::Storage* out) {
  pb::UpdateStorageRequest req;
  req.mutable_storage()->set_storage_id(storage_id);
  req.mutable_storage()->set_spec_name(spec);
  req.mutable_update_mask()->add_paths("spec_name");
  pb::Storage ignored;
  return storage_->stub().UpdateStorage(Ctx(token).get(), req, out ? out : &ignored);
}

grpc::Status StorageTest::DeleteStorage(const std::string& token, const std::string& storage_id) {
  pb::DeleteStorageRequest req;
  req.set_storage_id(storage_id);
  pb::DeleteStorageResponse out;
  return storage_->stub().DeleteStorage(Ctx(token).get(), req, &out);
}

grpc::Status StorageTest::Attach(const std::string& storage_id, const std::string& instance_id,
                                 bool read_only, pb::Attachment* out, const std::string& node_id,
                                 const std::string& tenant_id, const std::string& storage_uid) {
  pb::AttachStorageRequest req;
  req.set_storage_id(storage_id);
  req.set_tenant_id(tenant_id);
  req.set_storage_uid(storage_uid);
  req.set_instance_id(instance_id);
  req.set_node_id(node_id);
  req.set_read_only(read_only);
  pb::Attachment ignored;
  return storage_->stub().AttachStorage(Ctx(service_).get(), req, out ? out : &ignored);
}

grpc::Status StorageTest::Detach(const std::string& storage_id, const std::string& instance_id,
                                 pb::DetachStorageResponse* out) {
  pb::DetachStorageRequest req;
  req.set_storage_id(storage_id);
  req.set_instance_id(instance_id);
  pb::DetachStorageResponse ignored;
  return storage_->stub().DetachStorage(Ctx(service_).get(), req, out ? out : &ignored);
}

grpc::Status StorageTest::CreateAccessor(const std::string& token, const std::string& storage_id,
                                         pb::CreateAccessorResponse* out, bool read_only,
                                         const std::string& request_id) {
  pb::CreateAccessorRequest req;
  req.set_storage_id(storage_id);
  req.set_read_only(read_only);
  req.set_request_id(request_id);
  pb::CreateAccessorResponse ignored;
  return storage_->stub().CreateAccessor(Ctx(token).get(), req, out ? out : &ignored);
}

void StorageTest::WriteObject(const std::string& storage_id, const std::string& key,
                              int64_t bytes) {
  pb::Storage s;
  grpc::Status got = GetStorage(admin_, storage_id, &s);
  ASSERT_TRUE(got.ok()) << got.error_message();
  Backend& backend =
      backend_ == VolumeBackend::kCeph ? *storage_->ceph_backend() : *storage_->local_backend();
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Volume> volume,
                       backend.OpenVolume(s.storage_uid(), {.max_bytes = s.size_bytes(),
                                                            .max_files = s.max_files()}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ObjectWriter> writer, volume->Create(key, bytes, ""));
  const std::string chunk(64 * 1024, 'x');
  for (int64_t left = bytes; left > 0;) {
    const int64_t n = std::min<int64_t>(left, static_cast<int64_t>(chunk.size()));
    ASSERT_OK(writer->Write(std::string_view(chunk.data(), static_cast<size_t>(n))));
    left -= n;
  }
  ASSERT_OK(writer->Commit().status());
}

}  // namespace gpuaas::storage::testing
