// The gRPC adapter of the storage service: each call goes to the domain through the shared
// rpc::Handler (authentication, worker pool, status mapping). Creates and grows read the
// tenant's quota from the auth service with the caller's own token, which the adapter copies
// from the call's metadata together with its deadline.
#pragma once

#include "gpuaas/storage/v1/storage.grpc.pb.h"
#include "libs/rpc/handler.h"
#include "services/storage/accessors.h"
#include "services/storage/attachments.h"
#include "services/storage/snapshots.h"
#include "services/storage/specs.h"
#include "services/storage/storages.h"

namespace gpuaas::storage {

// The domain objects one server serves; not owned.
struct StorageDomain {
  StorageSpecs& specs;
  Storages& storages;
  Attachments& attachments;
  Accessors& accessors;
  Snapshots& snapshots;
};

class StorageServiceImpl final : public pb::StorageService::CallbackService {
 public:
  StorageServiceImpl(StorageDomain domain, rpc::Handler& handler)
      : domain_(domain), handler_(handler) {}

  grpc::ServerUnaryReactor* CreateStorageSpec(grpc::CallbackServerContext* ctx,
                                              const pb::CreateStorageSpecRequest* req,
                                              pb::StorageSpec* resp) override;
  grpc::ServerUnaryReactor* GetStorageSpec(grpc::CallbackServerContext* ctx,
                                           const pb::GetStorageSpecRequest* req,
                                           pb::StorageSpec* resp) override;
  grpc::ServerUnaryReactor* ListStorageSpecs(grpc::CallbackServerContext* ctx,
                                             const pb::ListStorageSpecsRequest* req,
                                             pb::ListStorageSpecsResponse* resp) override;
  grpc::ServerUnaryReactor* UpdateStorageSpec(grpc::CallbackServerContext* ctx,
                                              const pb::UpdateStorageSpecRequest* req,
                                              pb::StorageSpec* resp) override;
  grpc::ServerUnaryReactor* DeleteStorageSpec(grpc::CallbackServerContext* ctx,
                                              const pb::DeleteStorageSpecRequest* req,
                                              pb::DeleteStorageSpecResponse* resp) override;
  grpc::ServerUnaryReactor* CreateStorage(grpc::CallbackServerContext* ctx,
                                          const pb::CreateStorageRequest* req,
                                          pb::Storage* resp) override;
  grpc::ServerUnaryReactor* GetStorage(grpc::CallbackServerContext* ctx,
                                       const pb::GetStorageRequest* req,
                                       pb::Storage* resp) override;
  grpc::ServerUnaryReactor* ListStorages(grpc::CallbackServerContext* ctx,
                                         const pb::ListStoragesRequest* req,
                                         pb::ListStoragesResponse* resp) override;
  grpc::ServerUnaryReactor* UpdateStorage(grpc::CallbackServerContext* ctx,
                                          const pb::UpdateStorageRequest* req,
                                          pb::Storage* resp) override;
  grpc::ServerUnaryReactor* DeleteStorage(grpc::CallbackServerContext* ctx,
                                          const pb::DeleteStorageRequest* req,
                                          pb::DeleteStorageResponse* resp) override;
  grpc::ServerUnaryReactor* AttachStorage(grpc::CallbackServerContext* ctx,
                                          const pb::AttachStorageRequest* req,
                                          pb::Attachment* resp) override;
  grpc::ServerUnaryReactor* DetachStorage(grpc::CallbackServerContext* ctx,
                                          const pb::DetachStorageRequest* req,
                                          pb::DetachStorageResponse* resp) override;
  grpc::ServerUnaryReactor* CreateAccessor(grpc::CallbackServerContext* ctx,
                                           const pb::CreateAccessorRequest* req,
                                           pb::CreateAccessorResponse* resp) override;
  grpc::ServerUnaryReactor* ListAccessors(grpc::CallbackServerContext* ctx,
                                          const pb::ListAccessorsRequest* req,
                                          pb::ListAccessorsResponse* resp) override;
  grpc::ServerUnaryReactor* DeleteAccessor(grpc::CallbackServerContext* ctx,
                                           const pb::DeleteAccessorRequest* req,
                                           pb::DeleteAccessorResponse* resp) override;

  grpc::ServerUnaryReactor* CreateSnapshot(grpc::CallbackServerContext* ctx,
                                           const pb::CreateSnapshotRequest* req,
                                           pb::Snapshot* resp) override;
  grpc::ServerUnaryReactor* ListSnapshots(grpc::CallbackServerContext* ctx,
                                          const pb::ListSnapshotsRequest* req,
                                          pb::ListSnapshotsResponse* resp) override;
  grpc::ServerUnaryReactor* DeleteSnapshot(grpc::CallbackServerContext* ctx,
                                           const pb::DeleteSnapshotRequest* req,
                                           pb::DeleteSnapshotResponse* resp) override;

 private:
  StorageDomain domain_;
  rpc::Handler& handler_;
};

// What node agents call (NodeStorageService): the keys of their attachments' mounts.
class NodeStorageServiceImpl final : public pb::NodeStorageService::CallbackService {
 public:
  NodeStorageServiceImpl(Attachments& attachments, rpc::Handler& handler)
      : attachments_(attachments), handler_(handler) {}

  grpc::ServerUnaryReactor* GetMountCredential(grpc::CallbackServerContext* ctx,
                                               const pb::GetMountCredentialRequest* req,
                                               pb::MountCredential* resp) override;

 private:
  Attachments& attachments_;
  rpc::Handler& handler_;
};

}  // namespace gpuaas::storage
