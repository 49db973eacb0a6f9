#include "bench/loadgen/methods.h"

#include <atomic>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gpuaas/auth/v1/auth.grpc.pb.h"
#include "gpuaas/instance/v1/instance.grpc.pb.h"
#include "gpuaas/storage/v1/storage.grpc.pb.h"
#include "libs/client/call_context.h"

namespace gpuaas::bench {
namespace {

namespace authpb = ::gpuaas::auth::v1;
using AuthStub = std::shared_ptr<authpb::AuthService::Stub>;
using Callback = std::function<void(grpc::Status)>;

constexpr std::string_view kAuthService = "gpuaas.auth.v1.AuthService";
constexpr std::string_view kStorageService = "gpuaas.storage.v1.StorageService";
constexpr std::string_view kInstanceService = "gpuaas.instance.v1.InstanceService";
namespace instancepb = ::gpuaas::instance::v1;

// Wraps one callback-API method: each call gets a fresh context from libs/client (deadline,
// bearer token) and its own response object, both kept alive by the completion callback, and
// shares the request, which is never written after this point, so concurrent calls may read
// it. The raw async stub is what is measured: the blocking AuthClient would add a thread per
// call in flight.
template <class Resp, class Req, class Fire>
Invoker MakeInvoker(Req req, const MethodArgs& args, Fire fire) {
  auto shared_req = std::make_shared<const Req>(std::move(req));
  client::CallContext call;
  call.set_timeout(args.timeout).set_bearer_token(args.token);
  return [shared_req, call = std::move(call), fire](Callback done) {
    std::shared_ptr<grpc::ClientContext> ctx = call.NewClientContext();
    auto resp = std::make_shared<Resp>();
    // The context and response die before `done` runs: once `done` reports the call finished,
    // the caller may tear down the channel, and a context destroyed after that frees gRPC
    // state twice (ASan saw it).
    fire(ctx.get(), shared_req.get(), resp.get(),
         [ctx, resp, done = std::move(done)](grpc::Status s) mutable {
           ctx.reset();
           resp.reset();
           done(std::move(s));
         });
  };
}

AuthStub NewAuthStub(std::shared_ptr<grpc::Channel> channel) {
  return AuthStub(authpb::AuthService::NewStub(std::move(channel)));
}

absl::StatusOr<Invoker> WhoAmI(std::shared_ptr<grpc::Channel> ch, const MethodArgs& a) {
  AuthStub stub = NewAuthStub(std::move(ch));
  return MakeInvoker<authpb::WhoAmIResponse>(
      authpb::WhoAmIRequest(), a,
      [stub](grpc::ClientContext* c, const authpb::WhoAmIRequest* q, authpb::WhoAmIResponse* r,
             Callback cb) { stub->async()->WhoAmI(c, q, r, std::move(cb)); });
}

absl::StatusOr<Invoker> GetTenant(std::shared_ptr<grpc::Channel> ch, const MethodArgs& a) {
  if (a.tenant.empty()) {
    return absl::InvalidArgumentError("GetTenant needs --tenant");
  }
  authpb::GetTenantRequest req;
  req.set_tenant_id(a.tenant);
  AuthStub stub = NewAuthStub(std::move(ch));
  return MakeInvoker<authpb::Tenant>(
      std::move(req), a,
      [stub](grpc::ClientContext* c, const authpb::GetTenantRequest* q, authpb::Tenant* r,
             Callback cb) { stub->async()->GetTenant(c, q, r, std::move(cb)); });
}

absl::StatusOr<Invoker> ListTenants(std::shared_ptr<grpc::Channel> ch, const MethodArgs& a) {
  AuthStub stub = NewAuthStub(std::move(ch));
  return MakeInvoker<authpb::ListTenantsResponse>(
      authpb::ListTenantsRequest(), a,
      [stub](grpc::ClientContext* c, const authpb::ListTenantsRequest* q,
             authpb::ListTenantsResponse* r,
             Callback cb) { stub->async()->ListTenants(c, q, r, std::move(cb)); });
}

absl::StatusOr<Invoker> Login(std::shared_ptr<grpc::Channel> ch, const MethodArgs& a) {
  if (a.user.empty() || a.password.empty()) {
    return absl::InvalidArgumentError("Login needs --user and --password-file");
  }
  authpb::LoginRequest req;
  req.set_user_name(a.user);
  req.set_password(a.password);
  req.set_tenant_id(a.tenant);
  AuthStub stub = NewAuthStub(std::move(ch));
  MethodArgs public_call = a;
  public_call.token.clear();  // Login takes no token
  return MakeInvoker<authpb::LoginResponse>(
      std::move(req), public_call,
      [stub](grpc::ClientContext* c, const authpb::LoginRequest* q, authpb::LoginResponse* r,
             Callback cb) { stub->async()->Login(c, q, r, std::move(cb)); });
}

absl::StatusOr<Invoker> GetStorage(std::shared_ptr<grpc::Channel> ch, const MethodArgs& a) {
  namespace storagepb = ::gpuaas::storage::v1;
  if (a.storage_id.empty()) {
    return absl::InvalidArgumentError("GetStorage needs --storage");
  }
  storagepb::GetStorageRequest req;
  req.set_storage_id(a.storage_id);
  std::shared_ptr<storagepb::StorageService::Stub> stub =
      storagepb::StorageService::NewStub(std::move(ch));
  return MakeInvoker<storagepb::Storage>(
      std::move(req), a,
      [stub](grpc::ClientContext* c, const storagepb::GetStorageRequest* q, storagepb::Storage* r,
             Callback cb) { stub->async()->GetStorage(c, q, r, std::move(cb)); });
}

absl::StatusOr<Invoker> GetInstance(std::shared_ptr<grpc::Channel> ch, const MethodArgs& a) {
  if (a.instance_id.empty()) {
    return absl::InvalidArgumentError("GetInstance needs --instance");
  }
  instancepb::GetInstanceRequest req;
  req.set_instance_id(a.instance_id);
  std::shared_ptr<instancepb::InstanceService::Stub> stub =
      instancepb::InstanceService::NewStub(std::move(ch));
  return MakeInvoker<instancepb::Instance>(
      std::move(req), a,
      [stub](grpc::ClientContext* c, const instancepb::GetInstanceRequest* q,
             instancepb::Instance* r,
             Callback cb) { stub->async()->GetInstance(c, q, r, std::move(cb)); });
}

// Every call creates a new instance ("<prefix>-<n>"): a repeated id would measure the
// idempotent replay instead of a create.
absl::StatusOr<Invoker> CreateInstance(std::shared_ptr<grpc::Channel> ch, const MethodArgs& a) {
  if (a.spec_name.empty() || a.instance_id.empty()) {
    return absl::InvalidArgumentError("CreateInstance needs --spec and --instance (an id prefix)");
  }
  instancepb::CreateInstanceRequest base;
  base.set_spec_name(a.spec_name);
  base.mutable_template_()->set_cmd(a.cmd.empty() ? "exec sleep 86400" : a.cmd);
  std::shared_ptr<instancepb::InstanceService::Stub> stub =
      instancepb::InstanceService::NewStub(std::move(ch));
  auto next = std::make_shared<std::atomic<int64_t>>(0);
  client::CallContext call;
  call.set_timeout(a.timeout).set_bearer_token(a.token);
  return Invoker([stub, base = std::move(base), next, prefix = a.instance_id,
                  call = std::move(call)](Callback done) {
    std::shared_ptr<grpc::ClientContext> ctx = call.NewClientContext();
    auto req = std::make_shared<instancepb::CreateInstanceRequest>(base);
    req->set_instance_id(absl::StrCat(prefix, "-", next->fetch_add(1)));
    auto resp = std::make_shared<instancepb::Instance>();
    stub->async()->CreateInstance(ctx.get(), req.get(), resp.get(),
                                  [ctx, req, resp, done = std::move(done)](grpc::Status s) mutable {
                                    ctx.reset();
                                    req.reset();
                                    resp.reset();
                                    done(std::move(s));
                                  });
  });
}

}  // namespace

const std::vector<MethodSpec>& Methods() {
  // Function-local and never destroyed: no global object with a non-trivial destructor.
  static const auto* methods = new std::vector<MethodSpec>{
      {"WhoAmI", kAuthService, client::Service::kAuth, true, &WhoAmI},
      {"GetTenant", kAuthService, client::Service::kAuth, true, &GetTenant},
      {"ListTenants", kAuthService, client::Service::kAuth, true, &ListTenants},
      {"Login", kAuthService, client::Service::kAuth, false, &Login},
      {"GetStorage", kStorageService, client::Service::kStorage, true, &GetStorage},
      {"GetInstance", kInstanceService, client::Service::kInstance, true, &GetInstance},
      {"CreateInstance", kInstanceService, client::Service::kInstance, true, &CreateInstance},
  };
  return *methods;
}

const MethodSpec* FindMethod(std::string_view name) {
  for (const MethodSpec& m : Methods()) {
    if (m.name == name) {
      return &m;
    }
  }
  return nullptr;
}

std::string MethodNames() {
  std::string out;
  for (const MethodSpec& m : Methods()) {
    absl::StrAppend(&out, out.empty() ? "" : "|", std::string(m.name));
  }
  return out;
}

}  // namespace gpuaas::bench
