#include "libs/client/storage_client.h"

#include "libs/client/internal/unary_call.h"

namespace gpuaas::client {

StorageClient::StorageClient(std::shared_ptr<grpc::ChannelInterface> channel,
                             absl::Duration default_timeout)
    : stub_(::gpuaas::storage::v1::StorageService::NewStub(std::move(channel))),
      default_timeout_(default_timeout) {}

absl::StatusOr<storagepb::StorageSpec> StorageClient::CreateStorageSpec(
    const storagepb::CreateStorageSpecRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::CreateStorageSpec, req, call, default_timeout_);
}

absl::StatusOr<storagepb::StorageSpec> StorageClient::GetStorageSpec(
    const storagepb::GetStorageSpecRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::GetStorageSpec, req, call, default_timeout_);
}

absl::StatusOr<storagepb::ListStorageSpecsResponse> StorageClient::ListStorageSpecs(
    const storagepb::ListStorageSpecsRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::ListStorageSpecs, req, call, default_timeout_);
}

absl::StatusOr<storagepb::StorageSpec> StorageClient::UpdateStorageSpec(
    const storagepb::UpdateStorageSpecRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::UpdateStorageSpec, req, call, default_timeout_);
}

absl::StatusOr<storagepb::DeleteStorageSpecResponse> StorageClient::DeleteStorageSpec(
    const storagepb::DeleteStorageSpecRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::DeleteStorageSpec, req, call, default_timeout_);
}

absl::StatusOr<storagepb::Storage> StorageClient::CreateStorage(
    const storagepb::CreateStorageRequest& req, const CallContext& call) const {
  return internal::RepeatableUnaryCall(!req.storage_id().empty() || !req.request_id().empty(),
                                       *stub_, &Stub::CreateStorage, req, call, default_timeout_);
}

absl::StatusOr<storagepb::Storage> StorageClient::GetStorage(
    const storagepb::GetStorageRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::GetStorage, req, call, default_timeout_);
}

PendingCall<storagepb::Storage> StorageClient::StartGetStorage(
    const storagepb::GetStorageRequest& req, const CallContext& call) const {
  return internal::StartUnaryCall(*stub_, &Stub::async_interface::GetStorage, req, call,
                                  default_timeout_);
}

absl::StatusOr<storagepb::ListStoragesResponse> StorageClient::ListStorages(
    const storagepb::ListStoragesRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::ListStorages, req, call, default_timeout_);
}

absl::StatusOr<storagepb::Storage> StorageClient::UpdateStorage(
    const storagepb::UpdateStorageRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::UpdateStorage, req, call, default_timeout_);
}

absl::StatusOr<storagepb::DeleteStorageResponse> StorageClient::DeleteStorage(
    const storagepb::DeleteStorageRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::DeleteStorage, req, call, default_timeout_);
}

absl::StatusOr<storagepb::Attachment> StorageClient::AttachStorage(
    const storagepb::AttachStorageRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::AttachStorage, req, call, default_timeout_);
}

absl::StatusOr<storagepb::DetachStorageResponse> StorageClient::DetachStorage(
    const storagepb::DetachStorageRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::DetachStorage, req, call, default_timeout_);
}

absl::StatusOr<storagepb::CreateAccessorResponse> StorageClient::CreateAccessor(
    const storagepb::CreateAccessorRequest& req, const CallContext& call) const {
  return internal::RepeatableUnaryCall(!req.request_id().empty(), *stub_, &Stub::CreateAccessor,
                                       req, call, default_timeout_);
}

absl::StatusOr<storagepb::ListAccessorsResponse> StorageClient::ListAccessors(
    const storagepb::ListAccessorsRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::ListAccessors, req, call, default_timeout_);
}

absl::StatusOr<storagepb::DeleteAccessorResponse> StorageClient::DeleteAccessor(
    const storagepb::DeleteAccessorRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::DeleteAccessor, req, call, default_timeout_);
}

absl::StatusOr<storagepb::Snapshot> StorageClient::CreateSnapshot(
    const storagepb::CreateSnapshotRequest& req, const CallContext& call) const {
  return internal::RepeatableUnaryCall(/*idempotent=*/true, *stub_, &Stub::CreateSnapshot, req,
                                       call, default_timeout_);
}

absl::StatusOr<storagepb::ListSnapshotsResponse> StorageClient::ListSnapshots(
    const storagepb::ListSnapshotsRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::ListSnapshots, req, call, default_timeout_);
}

absl::StatusOr<storagepb::DeleteSnapshotResponse> StorageClient::DeleteSnapshot(
    const storagepb::DeleteSnapshotRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::DeleteSnapshot, req, call, default_timeout_);
}

}  // namespace gpuaas::client
