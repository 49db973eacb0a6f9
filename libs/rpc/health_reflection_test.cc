// What grpcurl does with grpc.health.v1.Health, against a real rpc::Server over loopback:
// list the services, fetch the proto that declares Health through reflection, build its
// descriptors in a fresh pool, and call Check with a dynamic message. Without health.proto in
// the server's descriptor pool, reflection answers "Symbol not found" and this fails.
//
// The reflection messages come from the generated pool, where Debian's libgrpc++_reflection
// registers them; gpuaas::grpc_reflection_proto cannot be linked next to it (see
// proto/CMakeLists.txt). Only they come from there: everything about Health comes from the
// server's answer.
#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/descriptor_database.h>
#include <google/protobuf/dynamic_message.h>
#include <grpcpp/generic/generic_stub.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "libs/rpc/echo_test_service.h"
#include "libs/rpc/server.h"

namespace gpuaas::rpc {
namespace {

namespace pb = ::google::protobuf;

constexpr absl::Duration kCallTimeout = absl::Seconds(10);
constexpr char kReflectionMethod[] =
    "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo";

grpc::ByteBuffer ToByteBuffer(const pb::Message& message) {
  grpc::Slice slice(message.SerializeAsString());
  return grpc::ByteBuffer(&slice, 1);
}

bool FromByteBuffer(const grpc::ByteBuffer& buffer, pb::Message& message) {
  std::vector<grpc::Slice> slices;
  if (!buffer.Dump(&slices).ok()) {
    return false;
  }
  std::string bytes;
  for (const grpc::Slice& s : slices) {
    bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  return message.ParseFromString(bytes);
}

// A ServerReflectionRequest or ServerReflectionResponse, from the generated pool.
std::unique_ptr<pb::Message> NewReflectionMessage(const std::string& type) {
  const pb::Descriptor* descriptor =
      pb::DescriptorPool::generated_pool()->FindMessageTypeByName(type);
  if (descriptor == nullptr) {
    return nullptr;
  }
  return std::unique_ptr<pb::Message>(
      pb::MessageFactory::generated_factory()->GetPrototype(descriptor)->New());
}

// One request and one response on a ServerReflectionInfo stream, through the generic
// (untyped) async API, as a client without generated stubs makes it.
absl::StatusOr<std::unique_ptr<pb::Message>> AskReflection(
    const std::shared_ptr<grpc::Channel>& channel, const std::string& field,
    const std::string& value) {
  std::unique_ptr<pb::Message> request =
      NewReflectionMessage("grpc.reflection.v1alpha.ServerReflectionRequest");
  std::unique_ptr<pb::Message> response =
      NewReflectionMessage("grpc.reflection.v1alpha.ServerReflectionResponse");
  if (request == nullptr || response == nullptr) {
    return absl::InternalError("reflection messages missing from the generated pool");
  }
  request->GetReflection()->SetString(request.get(),
                                      request->GetDescriptor()->FindFieldByName(field), value);

  grpc::GenericStub stub(channel);
  grpc::CompletionQueue cq;
  std::unique_ptr<grpc::ClientContext> ctx = test::NewClientContext(kCallTimeout);
  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call =
      stub.PrepareCall(ctx.get(), kReflectionMethod, &cq);
  // Each step has its own tag and waits for it; the queue carries one operation at a time.
  auto step = [&cq](intptr_t tag) {
    void* got = nullptr;
    bool ok = false;
    return cq.Next(&got, &ok) && ok && reinterpret_cast<intptr_t>(got) == tag;
  };
  grpc::ByteBuffer request_buffer = ToByteBuffer(*request);
  grpc::ByteBuffer response_buffer;
  grpc::Status status;
  call->StartCall(reinterpret_cast<void*>(1));
  bool sent = step(1);
  if (sent) {
    call->Write(request_buffer, reinterpret_cast<void*>(2));
    sent = step(2);
  }
  bool received = false;
  if (sent) {
    call->Read(&response_buffer, reinterpret_cast<void*>(3));
    received = step(3);
    call->WritesDone(reinterpret_cast<void*>(4));
    step(4);
  }
  call->Finish(&status, reinterpret_cast<void*>(5));
  step(5);
  cq.Shutdown();
  void* ignored_tag;
  bool ignored_ok;
  while (cq.Next(&ignored_tag, &ignored_ok)) {
  }
  if (!status.ok()) {
    return FromGrpcStatus(status);
  }
  if (!received || !FromByteBuffer(response_buffer, *response)) {
    return absl::InternalError("no reflection response");
  }
  return response;
}

// file_containing_symbol: the proto files (as FileDescriptorProto) that declare `symbol`,
// with their imports. NOT_FOUND (or the server's code) when reflection answers an error.
absl::StatusOr<std::vector<pb::FileDescriptorProto>> FilesContainingSymbol(
    const std::shared_ptr<grpc::Channel>& channel, const std::string& symbol) {
  absl::StatusOr<std::unique_ptr<pb::Message>> response =
      AskReflection(channel, "file_containing_symbol", symbol);
  if (!response.ok()) {
    return response.status();
  }
  const pb::Message& r = **response;
  const pb::Reflection& reflection = *r.GetReflection();
  const pb::Descriptor& type = *r.GetDescriptor();
  if (reflection.HasField(r, type.FindFieldByName("error_response"))) {
    const pb::Message& error = reflection.GetMessage(r, type.FindFieldByName("error_response"));
    const pb::Descriptor& error_type = *error.GetDescriptor();
    return absl::Status(
        static_cast<absl::StatusCode>(
            error.GetReflection()->GetInt32(error, error_type.FindFieldByName("error_code"))),
        error.GetReflection()->GetString(error, error_type.FindFieldByName("error_message")));
  }
  const pb::Message& files =
      reflection.GetMessage(r, type.FindFieldByName("file_descriptor_response"));
  const pb::FieldDescriptor* bytes_field =
      files.GetDescriptor()->FindFieldByName("file_descriptor_proto");
  std::vector<pb::FileDescriptorProto> out;
  for (int i = 0; i < files.GetReflection()->FieldSize(files, bytes_field); ++i) {
    pb::FileDescriptorProto file;
    if (!file.ParseFromString(files.GetReflection()->GetRepeatedString(files, bytes_field, i))) {
      return absl::InternalError("unparsable FileDescriptorProto");
    }
    out.push_back(std::move(file));
  }
  return out;
}

// list_services: the full names of the services the server registered.
absl::StatusOr<std::vector<std::string>> ListServices(
    const std::shared_ptr<grpc::Channel>& channel) {
  absl::StatusOr<std::unique_ptr<pb::Message>> response =
      AskReflection(channel, "list_services", "");
  if (!response.ok()) {
    return response.status();
  }
  const pb::Message& r = **response;
  const pb::Message& list = r.GetReflection()->GetMessage(
      r, r.GetDescriptor()->FindFieldByName("list_services_response"));
  const pb::FieldDescriptor* service_field = list.GetDescriptor()->FindFieldByName("service");
  std::vector<std::string> names;
  for (int i = 0; i < list.GetReflection()->FieldSize(list, service_field); ++i) {
    const pb::Message& service = list.GetReflection()->GetRepeatedMessage(list, service_field, i);
    names.push_back(service.GetReflection()->GetString(
        service, service.GetDescriptor()->FindFieldByName("name")));
  }
  return names;
}

grpc::Status GenericUnaryCall(const std::shared_ptr<grpc::Channel>& channel,
                              const std::string& method, const pb::Message& request,
                              pb::Message& response) {
  grpc::GenericStub stub(channel);
  std::unique_ptr<grpc::ClientContext> ctx = test::NewClientContext(kCallTimeout);
  grpc::ByteBuffer request_buffer = ToByteBuffer(request);
  grpc::ByteBuffer response_buffer;
  std::promise<grpc::Status> done;
  stub.UnaryCall(ctx.get(), method, grpc::StubOptions(), &request_buffer, &response_buffer,
                 [&done](grpc::Status s) { done.set_value(std::move(s)); });
  grpc::Status status = done.get_future().get();
  if (status.ok() && !FromByteBuffer(response_buffer, response)) {
    return grpc::Status(grpc::StatusCode::INTERNAL, "unparsable response");
  }
  return status;
}

class HealthReflectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<Server>(
        ServerOptions{.name = "echo", .listen_address = "127.0.0.1:0", .metrics_address = ""},
        std::make_unique<test::FakeAuthenticator>());
    echo_ = std::make_unique<test::EchoService>(server_->handler());
    server_->AddService(echo_.get());
    absl::Status started = server_->Start();
    ASSERT_TRUE(started.ok()) << started;
    channel_ = test::LocalChannel(server_->port());
  }

  void TearDown() override { server_.reset(); }  // before echo_, which it serves

  std::unique_ptr<test::EchoService> echo_;
  std::unique_ptr<Server> server_;
  std::shared_ptr<grpc::Channel> channel_;
};

TEST_F(HealthReflectionTest, ListsHealth) {
  absl::StatusOr<std::vector<std::string>> services = ListServices(channel_);
  ASSERT_TRUE(services.ok()) << services.status();
  EXPECT_NE(std::find(services->begin(), services->end(), "grpc.health.v1.Health"),
            services->end());
}

// grpcurl's `describe grpc.health.v1.Health` and `grpc.health.v1.Health/Check`.
TEST_F(HealthReflectionTest, DescribesHealthAndCallsCheckFromTheReflectedDescriptors) {
  absl::StatusOr<std::vector<pb::FileDescriptorProto>> files =
      FilesContainingSymbol(channel_, "grpc.health.v1.Health");
  ASSERT_TRUE(files.ok()) << files.status();
  pb::SimpleDescriptorDatabase database;
  for (const pb::FileDescriptorProto& file : *files) {
    ASSERT_TRUE(database.Add(file)) << file.name();
  }
  pb::DescriptorPool pool(&database);  // fresh: knows only what the server sent
  const pb::ServiceDescriptor* health = pool.FindServiceByName("grpc.health.v1.Health");
  ASSERT_NE(health, nullptr);
  EXPECT_EQ(health->file()->name(), "grpc/health/v1/health.proto");
  const pb::MethodDescriptor* check = health->FindMethodByName("Check");
  ASSERT_NE(check, nullptr);
  EXPECT_NE(health->FindMethodByName("Watch"), nullptr);

  pb::DynamicMessageFactory factory(&pool);
  std::unique_ptr<pb::Message> request(factory.GetPrototype(check->input_type())->New());
  request->GetReflection()->SetString(request.get(),
                                      check->input_type()->FindFieldByName("service"),
                                      "gpuaas.testing.v1.EchoService");
  std::unique_ptr<pb::Message> response(factory.GetPrototype(check->output_type())->New());
  grpc::Status status = GenericUnaryCall(
      channel_, absl::StrCat("/", health->full_name(), "/", check->name()), *request, *response);
  ASSERT_TRUE(status.ok()) << status.error_message();

  const pb::FieldDescriptor* serving = check->output_type()->FindFieldByName("status");
  ASSERT_NE(serving, nullptr);
  EXPECT_EQ(response->GetReflection()->GetEnumValue(*response, serving), 1);
  EXPECT_EQ(response->GetReflection()->GetEnum(*response, serving)->name(), "SERVING");
}

// The helper above does see reflection's errors, so the test above cannot pass vacuously.
TEST_F(HealthReflectionTest, UnknownSymbolIsNotFound) {
  absl::StatusOr<std::vector<pb::FileDescriptorProto>> files =
      FilesContainingSymbol(channel_, "no.such.Service");
  EXPECT_EQ(files.status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace gpuaas::rpc
