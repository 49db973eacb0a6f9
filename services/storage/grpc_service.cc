#include "services/storage/grpc_service.h"

#include "libs/client/call_context.h"

namespace gpuaas::storage {
grpc::ServerUnaryReactor* StorageServiceImpl::CreateStorageSpec(
    grpc::CallbackServerContext* ctx, const pb::CreateStorageSpecRequest* req,
    pb::StorageSpec* resp) {
  return rpc::RunDomain(handler_, ctx, domain_.specs, &StorageSpecs::CreateStorageSpec, req, resp);
}

grpc::ServerUnaryReactor* StorageServiceImpl::GetStorageSpec(grpc::CallbackServerContext* ctx,
                                                             const pb::GetStorageSpecRequest* req,
                                                             pb::StorageSpec* resp) {
  return rpc::RunDomain(handler_, ctx, domain_.specs, &StorageSpecs::GetStorageSpec, req, resp);
}

grpc::ServerUnaryReactor* StorageServiceImpl::ListStorageSpecs(
    grpc::CallbackServerContext* ctx, const pb::ListStorageSpecsRequest* req,
    pb::ListStorageSpecsResponse* resp) {
  return rpc::RunDomain(handler_, ctx, domain_.specs, &StorageSpecs::ListStorageSpecs, req, resp);
}

grpc::ServerUnaryReactor* StorageServiceImpl::UpdateStorageSpec(
    grpc::CallbackServerContext* ctx, const pb::UpdateStorageSpecRequest* req,
    pb::StorageSpec* resp) {
  return rpc::RunDomain(handler_, ctx, domain_.specs, &StorageSpecs::UpdateStorageSpec, req, resp);
}

grpc::ServerUnaryReactor* StorageServiceImpl::DeleteStorageSpec(
    grpc::CallbackServerContext* ctx, const pb::DeleteStorageSpecRequest* req,
    pb::DeleteStorageSpecResponse* resp) {
  return rpc::RunDomain(handler_, ctx, domain_.specs, &StorageSpecs::DeleteStorageSpec, req, resp);
}

grpc::ServerUnaryReactor* StorageServiceImpl::CreateStorage(grpc::CallbackServerContext* ctx,
                                                            const pb::CreateStorageRequest* req,
                                                            pb::Storage* resp) {
  return rpc::RunAsCaller(handler_, ctx, domain_.storages, &Storages::CreateStorage, req, resp);
}

grpc::ServerUnaryReactor* StorageServiceImpl::GetStorage(grpc::CallbackServerContext* ctx,
                                                         const pb::GetStorageRequest* req,
                                                         pb::Storage* resp) {
  return rpc::RunDomain(handler_, ctx, domain_.storages, &Storages::GetStorage, req, resp);
}

grpc::ServerUnaryReactor* StorageServiceImpl::ListStorages(grpc::CallbackServerContext* ctx,
                                                           const pb::ListStoragesRequest* req,
                                                           pb::ListStoragesResponse* resp) {
  return rpc::RunDomain(handler_, ctx, domain_.storages, &Storages::ListStorages, req, resp);
}

grpc::ServerUnaryReactor* StorageServiceImpl::UpdateStorage(grpc::CallbackServerContext* ctx,
                                                            const pb::UpdateStorageRequest* req,
                                                            pb::Storage* resp) {
  return rpc::RunAsCaller(handler_, ctx, domain_.storages, &Storages::UpdateStorage, req, resp);
}

grpc::ServerUnaryReactor* StorageServiceImpl::DeleteStorage(grpc::CallbackServerContext* ctx,
                                                            const pb::DeleteStorageRequest* req,
                                                            pb::DeleteStorageResponse* resp) {
  return rpc::RunDomain(handler_, ctx, domain_.storages, &Storages::DeleteStorage, req, resp);
}

grpc::ServerUnaryReactor* StorageServiceImpl::AttachStorage(grpc::CallbackServerContext* ctx,
                                                            const pb::AttachStorageRequest* req,
                                                            pb::Attachment* resp) {
  return rpc::RunDomain(handler_, ctx, domain_.attachments, &Attachments::AttachStorage, req, resp);
}

grpc::ServerUnaryReactor* NodeStorageServiceImpl::GetMountCredential(
    grpc::CallbackServerContext* ctx, const pb::GetMountCredentialRequest* req,
    pb::MountCredential* resp) {
  return rpc::RunDomain(handler_, ctx, attachments_, &Attachments::GetMountCredential, req, resp);
}

grpc::ServerUnaryReactor* StorageServiceImpl::DetachStorage(grpc::CallbackServerContext* ctx,
                                                            const pb::DetachStorageRequest* req,
                                                            pb::DetachStorageResponse* resp) {
  return rpc::RunDomain(handler_, ctx, domain_.attachments, &Attachments::DetachStorage, req, resp);
}

grpc::ServerUnaryReactor* StorageServiceImpl::CreateAccessor(grpc::CallbackServerContext* ctx,
                                                             const pb::CreateAccessorRequest* req,
                                                             pb::CreateAccessorResponse* resp) {
  return rpc::RunDomain(handler_, ctx, domain_.accessors, &Accessors::CreateAccessor, req, resp);
}

grpc::ServerUnaryReactor* StorageServiceImpl::ListAccessors(grpc::CallbackServerContext* ctx,
                                                            const pb::ListAccessorsRequest* req,
                                                            pb::ListAccessorsResponse* resp) {
  return rpc::RunDomain(handler_, ctx, domain_.accessors, &Accessors::ListAccessors, req, resp);
}

grpc::ServerUnaryReactor* StorageServiceImpl::DeleteAccessor(grpc::CallbackServerContext* ctx,
                                                             const pb::DeleteAccessorRequest* req,
                                                             pb::DeleteAccessorResponse* resp) {
  return rpc::RunDomain(handler_, ctx, domain_.accessors, &Accessors::DeleteAccessor, req, resp);
}

grpc::ServerUnaryReactor* StorageServiceImpl::CreateSnapshot(grpc::CallbackServerContext* ctx,
                                                             const pb::CreateSnapshotRequest* req,
                                                             pb::Snapshot* resp) {
  return rpc::RunDomain(handler_, ctx, domain_.snapshots, &Snapshots::CreateSnapshot, req, resp);
}

grpc::ServerUnaryReactor* StorageServiceImpl::ListSnapshots(grpc::CallbackServerContext* ctx,
                                                            const pb::ListSnapshotsRequest* req,
                                                            pb::ListSnapshotsResponse* resp) {
  return rpc::RunDomain(handler_, ctx, domain_.snapshots, &Snapshots::ListSnapshots, req, resp);
}

grpc::ServerUnaryReactor* StorageServiceImpl::DeleteSnapshot(grpc::CallbackServerContext* ctx,
                                                             const pb::DeleteSnapshotRequest* req,
                                                             pb::DeleteSnapshotResponse* resp) {
  return rpc::RunDomain(handler_, ctx, domain_.snapshots, &Snapshots::DeleteSnapshot, req, resp);
}

}  // namespace gpuaas::storage
