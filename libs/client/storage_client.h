// The storage service (gpuaas.storage.v1.StorageService) for the other gpuaas binaries and the
// CLI: one method per RPC, named as in storage.proto, each blocking until the answer or the
// call's deadline. The instance service attaches and detaches storages through it; gpuaasctl
// manages storage specs, storages and accessors.
//
//   GPUAAS_ASSIGN_OR_RETURN(auto channel, client::OpenChannel(endpoint.address, endpoint.tls));
//   client::StorageClient storage(channel, absl::Seconds(2));
//   storage::v1::AttachStorageRequest req;
//   req.set_storage_id(storage_id);
//   req.set_tenant_id(instance_tenant_id);
//   req.set_storage_uid(bound_storage_uid);
//   req.set_instance_id(instance_id);
//   req.set_node_id(node_id);
//   GPUAAS_ASSIGN_OR_RETURN(
//       storage::v1::Attachment attached,
//       storage.AttachStorage(req,
//       client::CallContext::FromIncoming(*ctx).set_bearer_token(token)));
//
// Every method: the request as in storage.proto, `call` for the deadline, the bearer token and
// the incoming call to follow (call_context.h). Errors: the codes storage.proto documents for
// the RPC, with the server's message; UNAUTHENTICATED without a valid token (every RPC needs
// one); UNAVAILABLE when the service cannot be reached or is overloaded; DEADLINE_EXCEEDED when
// the deadline passed; CANCELLED when the incoming call this one follows was cancelled.
// Thread-safe: one client serves every thread.
#pragma once

#include <grpcpp/channel.h>

#include <memory>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "gpuaas/storage/v1/storage.grpc.pb.h"
#include "libs/client/call_context.h"
#include "libs/client/pending_call.h"

namespace gpuaas::client {

namespace storagepb = ::gpuaas::storage::v1;

class StorageClient final {
 public:
  // `channel` from OpenChannel; `default_timeout` bounds every call whose CallContext sets
  // none. Does not connect.
  explicit StorageClient(std::shared_ptr<grpc::ChannelInterface> channel,
                         absl::Duration default_timeout = kDefaultTimeout);

  absl::StatusOr<storagepb::StorageSpec> CreateStorageSpec(
      const storagepb::CreateStorageSpecRequest& req, const CallContext& call = {}) const;
  absl::StatusOr<storagepb::StorageSpec> GetStorageSpec(const storagepb::GetStorageSpecRequest& req,
                                                        const CallContext& call = {}) const;
  absl::StatusOr<storagepb::ListStorageSpecsResponse> ListStorageSpecs(
      const storagepb::ListStorageSpecsRequest& req, const CallContext& call = {}) const;
  absl::StatusOr<storagepb::StorageSpec> UpdateStorageSpec(
      const storagepb::UpdateStorageSpecRequest& req, const CallContext& call = {}) const;
  absl::StatusOr<storagepb::DeleteStorageSpecResponse> DeleteStorageSpec(
      const storagepb::DeleteStorageSpecRequest& req, const CallContext& call = {}) const;

  absl::StatusOr<storagepb::Storage> CreateStorage(const storagepb::CreateStorageRequest& req,
                                                   const CallContext& call = {}) const;
  absl::StatusOr<storagepb::Storage> GetStorage(const storagepb::GetStorageRequest& req,
                                                const CallContext& call = {}) const;
  // GetStorage started without waiting: several calls in flight at once (pending_call.h).
  PendingCall<storagepb::Storage> StartGetStorage(const storagepb::GetStorageRequest& req,
                                                  const CallContext& call = {}) const;
  absl::StatusOr<storagepb::ListStoragesResponse> ListStorages(
      const storagepb::ListStoragesRequest& req, const CallContext& call = {}) const;
  absl::StatusOr<storagepb::Storage> UpdateStorage(const storagepb::UpdateStorageRequest& req,
                                                   const CallContext& call = {}) const;
  absl::StatusOr<storagepb::DeleteStorageResponse> DeleteStorage(
      const storagepb::DeleteStorageRequest& req, const CallContext& call = {}) const;

  absl::StatusOr<storagepb::Attachment> AttachStorage(const storagepb::AttachStorageRequest& req,
                                                      const CallContext& call = {}) const;
  absl::StatusOr<storagepb::DetachStorageResponse> DetachStorage(
      const storagepb::DetachStorageRequest& req, const CallContext& call = {}) const;

  absl::StatusOr<storagepb::CreateAccessorResponse> CreateAccessor(
      const storagepb::CreateAccessorRequest& req, const CallContext& call = {}) const;
  absl::StatusOr<storagepb::ListAccessorsResponse> ListAccessors(
      const storagepb::ListAccessorsRequest& req, const CallContext& call = {}) const;
  absl::StatusOr<storagepb::DeleteAccessorResponse> DeleteAccessor(
      const storagepb::DeleteAccessorRequest& req, const CallContext& call = {}) const;

  // Idempotent by snapshot_id: retried like the other creates.
  absl::StatusOr<storagepb::Snapshot> CreateSnapshot(const storagepb::CreateSnapshotRequest& req,
                                                     const CallContext& call = {}) const;
  absl::StatusOr<storagepb::ListSnapshotsResponse> ListSnapshots(
      const storagepb::ListSnapshotsRequest& req, const CallContext& call = {}) const;
  absl::StatusOr<storagepb::DeleteSnapshotResponse> DeleteSnapshot(
      const storagepb::DeleteSnapshotRequest& req, const CallContext& call = {}) const;

 private:
  using Stub = ::gpuaas::storage::v1::StorageService::StubInterface;

  std::unique_ptr<Stub> stub_;
  absl::Duration default_timeout_;
};

}  // namespace gpuaas::client
