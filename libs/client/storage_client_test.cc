// StorageClient against an in-process fake of the storage service: every method reaches its
// own RPC with the bearer header and a deadline, and errors come back with code and message.
// The same client against the real service, on PostgreSQL: tests/storage/storage_client_test.cc.
#include "libs/client/storage_client.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "libs/client/call_context.h"
#include "libs/client/channel.h"
#include "libs/testing/status_matchers.h"

namespace gpuaas::client {
namespace {

using ::gpuaas::testing::StatusIs;

// As in auth_client_test.cc: what a server sees of a deadline is off by a few milliseconds.
constexpr absl::Duration kWireSlack = absl::Milliseconds(50);

struct Seen {
  std::string method;
  std::optional<std::string> authorization;  // nullopt: no header
  absl::Time deadline = absl::InfinitePast();
};

// Answers every RPC with `reply_` after noting which one was called.
class FakeStorage final : public storagepb::StorageService::Service {
 public:
// One override per RPC; the generated signatures differ only in their types.
#define GPUAAS_FAKE_RPC(Name, Req, Resp)                                                          \
  grpc::Status Name(grpc::ServerContext* ctx, const storagepb::Req*, storagepb::Resp*) override { \
    return Record(#Name, *ctx);                                                                   \
  }
  GPUAAS_FAKE_RPC(CreateStorageSpec, CreateStorageSpecRequest, StorageSpec)
  GPUAAS_FAKE_RPC(GetStorageSpec, GetStorageSpecRequest, StorageSpec)
  GPUAAS_FAKE_RPC(ListStorageSpecs, ListStorageSpecsRequest, ListStorageSpecsResponse)
  GPUAAS_FAKE_RPC(UpdateStorageSpec, UpdateStorageSpecRequest, StorageSpec)
  GPUAAS_FAKE_RPC(DeleteStorageSpec, DeleteStorageSpecRequest, DeleteStorageSpecResponse)
  GPUAAS_FAKE_RPC(CreateStorage, CreateStorageRequest, Storage)
  GPUAAS_FAKE_RPC(GetStorage, GetStorageRequest, Storage)
  GPUAAS_FAKE_RPC(ListStorages, ListStoragesRequest, ListStoragesResponse)
  GPUAAS_FAKE_RPC(UpdateStorage, UpdateStorageRequest, Storage)
  GPUAAS_FAKE_RPC(DeleteStorage, DeleteStorageRequest, DeleteStorageResponse)
  GPUAAS_FAKE_RPC(AttachStorage, AttachStorageRequest, Attachment)
  GPUAAS_FAKE_RPC(DetachStorage, DetachStorageRequest, DetachStorageResponse)
  GPUAAS_FAKE_RPC(CreateAccessor, CreateAccessorRequest, CreateAccessorResponse)
  GPUAAS_FAKE_RPC(ListAccessors, ListAccessorsRequest, ListAccessorsResponse)
  GPUAAS_FAKE_RPC(DeleteAccessor, DeleteAccessorRequest, DeleteAccessorResponse)
#undef GPUAAS_FAKE_RPC

  Seen seen() const {
    absl::MutexLock lock(&mu_);
    return seen_;
  }

  grpc::Status reply_ = grpc::Status::OK;

 private:
  grpc::Status Record(const char* method, const grpc::ServerContext& ctx) {
    Seen seen;
    seen.method = method;
    seen.deadline = IncomingDeadline(ctx);
    auto it = ctx.client_metadata().find("authorization");
    if (it != ctx.client_metadata().end()) {
      seen.authorization = std::string(it->second.data(), it->second.size());
    }
    absl::MutexLock lock(&mu_);
    seen_ = seen;
    return reply_;
  }

  mutable absl::Mutex mu_;
  Seen seen_ ABSL_GUARDED_BY(mu_);
};

// A client method called with a default request, reduced to its status.
using Call = std::function<absl::Status(const StorageClient&, const CallContext&)>;

template <class Req, class Resp>
Call Bind(absl::StatusOr<Resp> (StorageClient::*method)(const Req&, const CallContext&) const) {
  return [method](const StorageClient& c, const CallContext& call) {
    return (c.*method)(Req(), call).status();
  };
}

// Every StorageService RPC: the fake names what it received, so a client method wired to the
// wrong stub method fails here.
std::vector<std::pair<std::string, Call>> EveryMethod() {
  return {
      {"CreateStorageSpec", Bind(&StorageClient::CreateStorageSpec)},
      {"GetStorageSpec", Bind(&StorageClient::GetStorageSpec)},
      {"ListStorageSpecs", Bind(&StorageClient::ListStorageSpecs)},
      {"UpdateStorageSpec", Bind(&StorageClient::UpdateStorageSpec)},
      {"DeleteStorageSpec", Bind(&StorageClient::DeleteStorageSpec)},
      {"CreateStorage", Bind(&StorageClient::CreateStorage)},
      {"GetStorage", Bind(&StorageClient::GetStorage)},
      {"ListStorages", Bind(&StorageClient::ListStorages)},
      {"UpdateStorage", Bind(&StorageClient::UpdateStorage)},
      {"DeleteStorage", Bind(&StorageClient::DeleteStorage)},
      {"AttachStorage", Bind(&StorageClient::AttachStorage)},
      {"DetachStorage", Bind(&StorageClient::DetachStorage)},
      {"CreateAccessor", Bind(&StorageClient::CreateAccessor)},
      {"ListAccessors", Bind(&StorageClient::ListAccessors)},
      {"DeleteAccessor", Bind(&StorageClient::DeleteAccessor)},
  };
}

class StorageClientTest : public ::testing::Test {
 protected:
  StorageClientTest() {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&fake_);
    server_ = builder.BuildAndStart();
    channel_ = *OpenChannel("127.0.0.1:" + std::to_string(port), TlsOptions{});
  }
  ~StorageClientTest() override { server_->Shutdown(); }

  FakeStorage fake_;
  std::unique_ptr<grpc::Server> server_;
  std::shared_ptr<grpc::Channel> channel_;
};

TEST_F(StorageClientTest, EveryMethodReachesItsRpcWithTokenAndDeadline) {
  StorageClient storage(channel_, absl::Seconds(3));
  for (const auto& [name, call] : EveryMethod()) {
    SCOPED_TRACE(name);
    const absl::Time before = absl::Now();
    EXPECT_OK(call(storage, CallContext().set_bearer_token("tok-1")));
    const Seen seen = fake_.seen();
    EXPECT_EQ(seen.method, name);
    EXPECT_EQ(seen.authorization, "Bearer tok-1");
    EXPECT_GE(seen.deadline, before + absl::Seconds(3) - kWireSlack);
    EXPECT_LE(seen.deadline, absl::Now() + absl::Seconds(3) + kWireSlack);
  }
}

TEST_F(StorageClientTest, ServerErrorsKeepCodeAndMessage) {
  fake_.reply_ = grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                              "quota max_storage_bytes of tenant alpha exceeded");
  StorageClient storage(channel_);
  for (const auto& [name, call] : EveryMethod()) {
    SCOPED_TRACE(name);
    EXPECT_THAT(call(storage, CallContext()),
                StatusIs(absl::StatusCode::kResourceExhausted,
                         "quota max_storage_bytes of tenant alpha exceeded"));
  }
}

TEST(StorageClientUnreachableTest, IsUnavailable) {
  auto channel = OpenChannel("unix:/nonexistent/gpuaas-storage-client-test.sock", TlsOptions{});
  ASSERT_OK(channel);
  EXPECT_THAT(StorageClient(*channel).GetStorage({}), StatusIs(absl::StatusCode::kUnavailable));
}

}  // namespace
}  // namespace gpuaas::client
