// Every InstanceService, ImageService, NodeWorkloadService and AccessService RPC × every role, from
// the tenant the caller acts in and from another: instances and usage are alpha's (its viewers
// read, its members and tenant admins and the global roles drive them, another tenant finds
// nothing); images are the platform's catalog (every role reads, platform admins write) and each
// tenant's own (its members and admins write them; tests/security/images_attack_test.cc holds
// the other tenant's side); node workloads are for the node's own agent and the access calls
// for the proxy's own key, nobody else: not the services' key, not a platform admin (issue 22).
#include <gtest/gtest.h>

#include <functional>

#include "absl/strings/str_cat.h"
#include "libs/testing/permission_matrix.h"
#include "libs/testing/pg_test.h"
#include "libs/testing/temp_dir.h"
#include "tests/platform/platform_stack.h"

namespace gpuaas::platform_testing {
namespace {

using auth::testing::AuthStack;
using gpuaas::testing::CallerKind;
using gpuaas::testing::MatrixCaller;
using gpuaas::testing::MatrixRow;
using gpuaas::testing::RunPermissionMatrix;
using grpc::StatusCode;

constexpr StatusCode OK = StatusCode::OK;
constexpr StatusCode PD = StatusCode::PERMISSION_DENIED;
constexpr StatusCode NF = StatusCode::NOT_FOUND;
constexpr StatusCode FP = StatusCode::FAILED_PRECONDITION;

class InstancePermissionsTest : public gpuaas::testing::PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped()) return;
    // No agents: the matrix asks who may call, not whether a workload runs, so instances may
    // stay PENDING or fail for want of stock.
    PlatformOptions options;
    options.agents = {};
    stack_ = std::make_unique<PlatformStack>(dsn(), dir_.path(), options);
  }
  void TearDown() override {
    stack_.reset();
    PgTest::TearDown();
  }

  // An instance of alpha's, made by the platform admin.
  grpc::Status CreateInstance(const std::string& token, const std::string& id) {
    instancepb::CreateInstanceRequest r;
    r.set_instance_id(id);
    r.set_tenant_id("alpha");
    r.set_spec_name("p.1x");
    r.set_storage_id("shared");
    r.mutable_template_()->set_cmd("exec sleep 3600");
    instancepb::Instance out;
    return stack_->instances().CreateInstance(PlatformStack::Ctx(token).get(), r, &out);
  }

  grpc::Status CreateImage(const std::string& token, const std::string& name) {
    instancepb::CreateImageRequest r;
    r.mutable_image()->set_name(name);
    r.mutable_image()->set_version("1");
    r.mutable_image()->set_command("exec sleep 3600");
    instancepb::Image out;
    return stack_->images().CreateImage(PlatformStack::Ctx(token).get(), r, &out);
  }

  // A server stream's first message, or how it ended without one.
  template <typename Message>
  static grpc::Status FirstOf(grpc::ClientContext& ctx,
                              std::unique_ptr<grpc::ClientReader<Message>> reader) {
    Message first;
    if (reader->Read(&first)) {
      ctx.TryCancel();
      reader->Finish();
      return grpc::Status::OK;
    }
    return reader->Finish();
  }

  // How a session stream that sends only `start` ends.
  template <typename Req, typename Resp>
  grpc::Status SessionEnd(
      const std::string& token, const Req& start,
      std::unique_ptr<grpc::ClientReaderWriter<Req, Resp>> (
          instancepb::InstanceSessionService::Stub::*open)(grpc::ClientContext*)) {
    auto stub = instancepb::InstanceSessionService::NewStub(
        grpc::CreateChannel(stack_->instance().address(), grpc::InsecureChannelCredentials()));
    std::unique_ptr<grpc::ClientContext> ctx = PlatformStack::Ctx(token);
    auto stream = ((*stub).*open)(ctx.get());
    stream->Write(start);
    stream->WritesDone();
    Resp ignored;
    while (stream->Read(&ignored)) {
    }
    return stream->Finish();
  }

  gpuaas::testing::TempDir dir_;
  std::unique_ptr<PlatformStack> stack_;
};

TEST_F(InstancePermissionsTest, EveryRoleOnEveryRpc) {
  AuthStack& auth = stack_->auth();
  const std::string& admin = stack_->admin_token();
  const std::string member = stack_->CreateTenant("alpha");
  stack_->CreateTenant("beta");
  auth.CreateUser("viewer", "alpha", common::v1::ROLE_VIEWER);
  auth.CreateUser("tadmin", "alpha", common::v1::ROLE_TENANT_ADMIN);
  auth.CreateUser("other", "beta", common::v1::ROLE_TENANT_ADMIN);
  auth.CreateServiceUser("robot");

  const std::vector<MatrixCaller> callers = {
      {"viewer", auth.Login("viewer", AuthStack::PasswordOf("viewer")), CallerKind::kViewer},
      {"member", member, CallerKind::kUser},
      {"tenant-admin", auth.Login("tadmin", AuthStack::PasswordOf("tadmin")), CallerKind::kUser},
      {"other tenant's admin", auth.Login("other", AuthStack::PasswordOf("other")),
       CallerKind::kOther},
      {"service acting in a tenant", auth.Login("robot", AuthStack::PasswordOf("robot"), "alpha"),
       CallerKind::kService},
      {"service", auth.Login("robot", AuthStack::PasswordOf("robot")), CallerKind::kService},
      {"platform-admin", admin, CallerKind::kPlatform},
      {"node-x's agent", auth.ExchangeApiKey(stack_->agent_api_key("node-x")),
       CallerKind::kNodeAgent},
      {"access proxy",
       auth.ExchangeApiKey(auth.CreateApiKey(admin, "proxy", common::v1::ROLE_ACCESS_PROXY)),
       CallerKind::kProxy},
      {"gateway",
       auth.ExchangeApiKey(auth.CreateApiKey(admin, "gateway", common::v1::ROLE_GATEWAY)),
       CallerKind::kGateway},
  };

  // A spec without stock and a storage of alpha's.
  stockpb::CreateSpecRequest spec;
  spec.mutable_spec()->set_spec_name("p.1x");
  spec.mutable_spec()->set_gpu_type("A100-80GB");
  spec.mutable_spec()->set_gpu_num(1);
  spec.mutable_spec()->set_cpu("1");
  spec.mutable_spec()->set_memory("1Gi");
  spec.mutable_spec()->set_disk("1Gi");
  spec.mutable_spec()->mutable_price()->set_micros_per_hour(1000000);
  spec.mutable_spec()->mutable_price()->set_currency("USD");
  stockpb::Spec made;
  ASSERT_TRUE(stack_->stock_stub().CreateSpec(PlatformStack::Ctx(admin).get(), spec, &made).ok());
  stack_->CreateStorage(member, "shared");
  ASSERT_TRUE(CreateInstance(member, "owned").ok());
  ASSERT_TRUE(CreateImage(admin, "catalog").ok());

  // Resources a destructive call consumes, made fresh for call `n` by the admin.
  const auto fresh_instance = [&](int n) {
    const std::string id = absl::StrCat("victim-", n);
    EXPECT_TRUE(CreateInstance(admin, id).ok()) << id;
    return id;
  };
  const auto fresh_image = [&](int n) {
    const std::string name = absl::StrCat("old-", n);
    EXPECT_TRUE(CreateImage(admin, name).ok()) << name;
    return name + ":1";
  };

  auto& instances = stack_->instances();
  auto& images = stack_->images();
  using Ctx = std::unique_ptr<grpc::ClientContext>;
  const std::vector<MatrixRow> rows = {
      {"CreateInstance",
       [&](const std::string& t, int n) { return CreateInstance(t, absl::StrCat("made-", n)); }, PD,
       OK, NF, OK, OK},
      {"GetInstance",
       [&](const std::string& t, int) {
         instancepb::GetInstanceRequest r;
         r.set_instance_id("owned");
         instancepb::Instance out;
         return instances.GetInstance(PlatformStack::Ctx(t).get(), r, &out);
       },
       OK, OK, NF, OK, OK},
      {"ListInstances",
       [&](const std::string& t, int) {
         instancepb::ListInstancesRequest r;
         r.set_tenant_id("alpha");
         instancepb::ListInstancesResponse out;
         return instances.ListInstances(PlatformStack::Ctx(t).get(), r, &out);
       },
       OK, OK, NF, OK, OK, PD, OK},
      // The machines' keys see no tenant's instance: driving one is NOT_FOUND.
      {"StartInstance",
       [&](const std::string& t, int n) {
         instancepb::StartInstanceRequest r;
         r.set_instance_id(fresh_instance(n));
         instancepb::Instance out;
         return instances.StartInstance(PlatformStack::Ctx(t).get(), r, &out);
       },
       PD, OK, NF, OK, OK, NF, NF, NF},
      {"StopInstance",
       [&](const std::string& t, int n) {
         instancepb::StopInstanceRequest r;
         r.set_instance_id(fresh_instance(n));
         instancepb::Instance out;
         return instances.StopInstance(PlatformStack::Ctx(t).get(), r, &out);
       },
       PD, OK, NF, OK, OK, NF, NF, NF},
      {"DeleteInstance",
       [&](const std::string& t, int n) {
         instancepb::DeleteInstanceRequest r;
         r.set_instance_id(fresh_instance(n));
         instancepb::Instance out;
         return instances.DeleteInstance(PlatformStack::Ctx(t).get(), r, &out);
       },
       PD, OK, NF, OK, OK, NF, NF, NF},
      {"WatchInstances",
       [&](const std::string& t, int) {
         instancepb::WatchInstancesRequest r;
         r.set_tenant_id("alpha");
         Ctx ctx = PlatformStack::Ctx(t);
         return FirstOf(*ctx, instances.WatchInstances(ctx.get(), r));
       },
       OK, OK, NF, OK, OK, PD, OK},
      {"ListUsage",
       [&](const std::string& t, int) {
         instancepb::ListUsageRequest r;
         r.set_tenant_id("alpha");
         instancepb::ListUsageResponse out;
         return instances.ListUsage(PlatformStack::Ctx(t).get(), r, &out);
       },
       OK, OK, NF, OK, OK},
      // No agents: "owned" stays PENDING, so whoever may open it or read its GPUs learns that it
      // does not run yet.
      {"GetInstanceAccess",
       [&](const std::string& t, int) {
         instancepb::GetInstanceAccessRequest r;
         r.set_instance_id("owned");
         instancepb::InstanceAccess out;
         return instances.GetInstanceAccess(PlatformStack::Ctx(t).get(), r, &out);
       },
       PD, FP, NF, FP, FP},
      {"GetInstanceMetrics",
       [&](const std::string& t, int) {
         instancepb::GetInstanceMetricsRequest r;
         r.set_instance_id("owned");
         instancepb::InstanceMetrics out;
         return instances.GetInstanceMetrics(PlatformStack::Ctx(t).get(), r, &out);
       },
       FP, FP, NF, FP, FP},
      {"RedeemAccessCode",
       [&](const std::string& t, int) {
         instancepb::RedeemAccessCodeRequest r;
         r.set_code("no-such-code");
         r.set_instance_id("owned");
         r.set_port(8080);
         instancepb::AccessGrant out;
         return stack_->access().RedeemAccessCode(PlatformStack::Ctx(t).get(), r, &out);
       },
       PD, PD, PD, PD, PD, PD, NF},
      // Port 1 is no HTTP port of "owned": the services hear the grant no longer holds.
      {"CheckAccessGrant",
       [&](const std::string& t, int) {
         instancepb::CheckAccessGrantRequest r;
         r.mutable_grant()->set_instance_id("owned");
         r.mutable_grant()->set_tenant_id("alpha");
         r.mutable_grant()->set_port(1);
         r.mutable_grant()->set_user_id("usr_nobody");
         instancepb::AccessGrant out;
         return stack_->access().CheckAccessGrant(PlatformStack::Ctx(t).get(), r, &out);
       },
       PD, PD, PD, PD, PD, PD, NF},
      {"ReportAccess",
       [&](const std::string& t, int) {
         instancepb::ReportAccessRequest r;
         r.add_instance_ids("owned");
         instancepb::ReportAccessResponse out;
         return stack_->access().ReportAccess(PlatformStack::Ctx(t).get(), r, &out);
       },
       PD, PD, PD, PD, PD, PD, OK},
      {"GetProxyToken",
       [&](const std::string& t, int) {
         instancepb::GetProxyTokenRequest r;
         r.set_instance_id("owned");
         instancepb::ProxyToken out;
         return stack_->access().GetProxyToken(PlatformStack::Ctx(t).get(), r, &out);
       },
       PD, PD, PD, PD, PD, PD, OK},
      // "owned" never ran (no agents): whoever may read it hears FAILED_PRECONDITION.
      {"GetInstanceLogs",
       [&](const std::string& t, int) {
         instancepb::GetInstanceLogsRequest r;
         r.set_instance_id("owned");
         Ctx ctx = PlatformStack::Ctx(t);
         return FirstOf(*ctx, instances.GetInstanceLogs(ctx.get(), r));
       },
       FP, FP, NF, FP, FP},
      // A terminal or a port-forward needs MEMBER; "owned" does not run, so whoever may open
      // one learns that.
      {"ExecInstance",
       [&](const std::string& t, int) {
         instancepb::ExecInstanceRequest r;
         r.mutable_start()->set_instance_id("owned");
         r.mutable_start()->add_command("true");
         return SessionEnd<instancepb::ExecInstanceRequest, instancepb::ExecInstanceResponse>(
             t, r, &instancepb::InstanceSessionService::Stub::ExecInstance);
       },
       PD, FP, NF, FP, FP},
      {"ForwardInstancePort",
       [&](const std::string& t, int) {
         instancepb::ForwardInstancePortRequest r;
         r.mutable_start()->set_instance_id("owned");
         r.mutable_start()->set_port(22);
         return SessionEnd<instancepb::ForwardInstancePortRequest,
                           instancepb::ForwardInstancePortResponse>(
             t, r, &instancepb::InstanceSessionService::Stub::ForwardInstancePort);
       },
       PD, FP, NF, FP, FP},
      // Without a tenant_id: tenant roles add their own tenant's image (another tenant's admin
      // too, in its own), global roles the catalog's, which needs a platform admin.
      {"CreateImage",
       [&](const std::string& t, int n) { return CreateImage(t, absl::StrCat("new-", n)); }, PD, OK,
       OK, PD, OK},
      {"GetImage",
       [&](const std::string& t, int) {
         instancepb::GetImageRequest r;
         r.set_image("catalog:1");
         instancepb::Image out;
         return images.GetImage(PlatformStack::Ctx(t).get(), r, &out);
       },
       OK, OK, OK, OK, OK},
      {"ListImages",
       [&](const std::string& t, int) {
         instancepb::ListImagesRequest r;
         instancepb::ListImagesResponse out;
         return images.ListImages(PlatformStack::Ctx(t).get(), r, &out);
       },
       OK, OK, OK, OK, OK},
      {"DeleteImage",
       [&](const std::string& t, int n) {
         instancepb::DeleteImageRequest r;
         r.set_image(fresh_image(n));
         instancepb::DeleteImageResponse out;
         return images.DeleteImage(PlatformStack::Ctx(t).get(), r, &out);
       },
       PD, PD, PD, PD, OK},
      {"WatchWorkloads",
       [&](const std::string& t, int) {
         instancepb::WatchWorkloadsRequest r;
         r.set_node_id("node-x");
         r.set_address("127.0.0.1");
         Ctx ctx = PlatformStack::Ctx(t);
         return FirstOf(*ctx, stack_->node_workloads().WatchWorkloads(ctx.get(), r));
       },
       PD, PD, PD, PD, PD, OK, PD},
      {"ReportWorkloads",
       [&](const std::string& t, int) {
         instancepb::ReportWorkloadsRequest r;
         r.set_node_id("node-x");
         instancepb::ReportWorkloadsResponse out;
         return stack_->node_workloads().ReportWorkloads(PlatformStack::Ctx(t).get(), r, &out);
       },
       PD, PD, PD, PD, PD, OK, PD},
  };
  // Every RPC of the three services has a row: a new RPC without one fails here.
  const auto* file = instancepb::Instance::descriptor()->file();
  size_t methods = 0;
  for (int s = 0; s < file->service_count(); ++s) methods += file->service(s)->method_count();
  RunPermissionMatrix(rows, callers, methods);
}

// Bad templates over gRPC: INVALID_ARGUMENT with the field's path first (every rule:
// services/instance/instance_rules_test.cc), before any lookup and whoever asks.
TEST_F(InstancePermissionsTest, BadTemplatesAreRefusedNamingTheField) {
  const std::string member = stack_->CreateTenant("alpha");
  struct Case {
    std::string field;
    std::function<void(instancepb::Template&)> spoil;
  };
  const std::vector<Case> cases = {
      {"template.ports[0].port", [](auto& t) { t.add_ports()->set_port(70000); }},
      {"template.ports[1].port",
       [](auto& t) {
         t.add_ports()->set_port(8080);
         t.add_ports()->set_port(8080);
       }},
      {"template.ports[1].is_probe",
       [](auto& t) {
         for (int port : {8080, 8081}) {
           instancepb::Port* p = t.add_ports();
           p->set_port(port);
           p->set_is_probe(true);
         }
       }},
      {"template.envs[0].name",
       [](auto& t) {
         instancepb::Env* e = t.add_envs();
         e->set_name("not-an-identifier");
         e->set_value("x");
       }},
      {"template.volumes[0].mount_path",
       [](auto& t) {
         instancepb::Volume* v = t.add_volumes();
         v->set_name("data");
         v->set_mount_path("data");
       }},
      {"template.volumes[0].mount_path",
       [](auto& t) {
         instancepb::Volume* v = t.add_volumes();
         v->set_name("data");
         v->set_mount_path("/data/../etc");
       }},
      {"template.cmd", [](auto& t) { t.set_cmd(std::string(1 << 20, 'x')); }},
  };
  for (const Case& c : cases) {
    instancepb::CreateInstanceRequest r;
    r.set_instance_id("bad-1");
    r.set_spec_name("p.1x");
    r.mutable_template_()->set_cmd("exec sleep 1");
    c.spoil(*r.mutable_template_());
    instancepb::Instance out;
    const grpc::Status s =
        stack_->instances().CreateInstance(PlatformStack::Ctx(member).get(), r, &out);
    EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT) << c.field << ": " << s.error_message();
    EXPECT_EQ(s.error_message().rfind(c.field + ":", 0), 0u) << s.error_message();
  }
}

}  // namespace
}  // namespace gpuaas::platform_testing
