// Attacks on the catalog's images (issue 22, hole 2): their servers switch their own logins off
// and leave the guarding to the access proxy, but a workload shared its node's network, so
// another tenant's workload reached their host ports directly. Two layers now: each workload's
// own network namespace (issue 23) leaves another tenant's workload no route to those ports,
// and behind it each instance has a proxy token that only the proxy sends
// (services/proxy/proxy_token.h) and the image's server requires
// (tools/images/jupyter/run-jupyter), checked here from the node itself, which does reach the
// ports. Through the proxy, the owner gets in. One Jupyter instance and one plain workload of
// the attacker's tenant, on one node; the WebUI demo's API likewise.
#include <gtest/gtest.h>

#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "libs/testing/pg_test.h"
#include "libs/testing/temp_dir.h"
#include "tests/images/image_stack.h"

namespace gpuaas::images_testing {
namespace {

// What the attacker runs: requests to the victim's Jupyter at JUPYTER_URL and WebUI at
// WEBUI_URL, straight to their host ports over loopback; one "<attack> <HTTP status or error>"
// line each.
constexpr char kAttack[] = R"py(
import os, urllib.error, urllib.request
def status(base, method, path, headers={}):
    req = urllib.request.Request(base + path, method=method, headers=headers,
                                 data=b'{"prompt": "x"}' if method == "POST" else None)
    try:
        return urllib.request.urlopen(req, timeout=3).status
    except urllib.error.HTTPError as e:
        return e.code
    except Exception as e:
        return type(e).__name__
jupyter, webui = os.environ["JUPYTER_URL"], os.environ["WEBUI_URL"]
print("jupyter-list-kernels", status(jupyter, "GET", "api/kernels"), flush=True)
print("jupyter-start-kernel", status(jupyter, "POST", "api/kernels"), flush=True)
print("jupyter-read-data", status(jupyter, "GET", "api/contents"), flush=True)
print("jupyter-guessed-token",
      status(jupyter, "GET", "api/kernels", {"Authorization": "token guessed"}), flush=True)
print("jupyter-empty-query-token", status(jupyter, "GET", "api/kernels?token="), flush=True)
print("webui-list-jobs", status(webui, "GET", "api/jobs"), flush=True)
print("webui-generate", status(webui, "POST", "api/generate"), flush=True)
print("webui-guessed-token",
      status(webui, "GET", "api/jobs", {"Authorization": "token guessed"}), flush=True)
print("done", flush=True)
)py";

class CatalogAttackTest : public gpuaas::testing::PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped()) return;
    stack_ = std::make_unique<ImageStack>(dsn(), dir_.path(),
                                          std::vector<AgentSpec>{{"node-a", "3xA100-80GB"}});
    victim_ = stack_->platform().CreateTenant("victim");
    mallory_ = stack_->platform().CreateTenant("mallory");
    stack_->platform().CreateSpecWithStocks("a100.1x", "A100-80GB", 1, 0, 3);
    stack_->platform().CreateStorage(victim_, "notebooks");
    stack_->platform().CreateStorage(victim_, "pictures");
  }
  void TearDown() override {
    stack_.reset();
    PgTest::TearDown();
  }

  // The instance's output (stdout and stderr) until it holds `until` or the call's deadline;
  // what it wrote so far for an empty `until`.
  std::string LogsUntil(const std::string& token, const std::string& instance_id,
                        const std::string& until) {
    instancepb::GetInstanceLogsRequest req;
    req.set_instance_id(instance_id);
    req.set_follow(!until.empty());
    std::unique_ptr<grpc::ClientContext> ctx = PlatformStack::Ctx(token);
    auto reader = stack_->platform().instances().GetInstanceLogs(ctx.get(), req);
    std::string logs;
    for (instancepb::LogChunk chunk; reader->Read(&chunk);) {
      logs += chunk.data();
      if (!until.empty() && absl::StrContains(logs, until)) {
        ctx->TryCancel();
        break;
      }
    }
    reader->Finish();
    return logs;
  }

  // The host port the agent gave `port` of `instance`; 0 when none.
  static int HostPort(const instancepb::Instance& instance, int port) {
    for (const instancepb::PortMapping& m : instance.ports()) {
      if (m.port() == port) return m.host_port();
    }
    return 0;
  }

  // The HTTP status of GET `path` on `port` of `instance` through the access proxy as its owner.
  std::string OwnerGet(const instancepb::Instance& instance, int port, const std::string& path) {
    const std::vector<std::string> access = stack_->AccessFlags(instance, port, victim_);
    EXPECT_EQ(access.size(), 6u);
    if (access.size() != 6) return "";
    const CommandOutput r =
        RunCommand({"/usr/bin/curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "--noproxy",
                    "*", "-H", "Host: " + access.at(3), "-H", access.at(5), access.at(1) + path},
                   {});
    return r.out;
  }

  gpuaas::testing::TempDir dir_;
  std::unique_ptr<ImageStack> stack_;
  std::string victim_;
  std::string mallory_;
};

TEST_F(CatalogAttackTest, AnotherTenantsWorkloadCannotDriveCatalogServersNorLearnTheirToken) {
  const instancepb::Instance nb = stack_->RunImage(victim_, "nb", "jupyter", "notebooks");
  ASSERT_EQ(nb.state(), instancepb::STATE_RUNNING);
  const instancepb::Instance sd = stack_->RunImage(victim_, "sd", "webui-demo", "pictures");
  ASSERT_EQ(sd.state(), instancepb::STATE_RUNNING);

  // Mallory's workload knows where the victim's servers listen (a scan of the port range would
  // find them too) and asks Jupyter to list and start kernels and to read /data, the WebUI to
  // list and queue jobs.
  instancepb::Template attack;
  attack.set_cmd("/usr/bin/python3 -c \"$ATTACK\"; exec sleep 600");
  std::vector<std::string> urls;
  for (const auto& [name, instance, port] :
       {std::tuple("JUPYTER_URL", &nb, 8888), std::tuple("WEBUI_URL", &sd, 7860)}) {
    instancepb::Env* url = attack.add_envs();
    url->set_name(name);
    url->set_value(absl::StrCat("http://127.0.0.1:", HostPort(*instance, port), "/"));
    urls.push_back(absl::StrCat(name, "=", url->value()));
  }
  instancepb::Env* script = attack.add_envs();
  script->set_name("ATTACK");
  script->set_value(kAttack);
  ASSERT_EQ(stack_->RunImage(mallory_, "probe", "", "", attack).state(), instancepb::STATE_RUNNING);
  const std::string seen = LogsUntil(mallory_, "probe", "done\n");
  // From the attacker's workload: no answer at all (no route to the node's ports).
  constexpr const char* kAttacks[] = {
      "jupyter-list-kernels",  "jupyter-start-kernel",      "jupyter-read-data",
      "jupyter-guessed-token", "jupyter-empty-query-token", "webui-list-jobs",
      "webui-generate",        "webui-guessed-token"};
  for (const char* attack_name : kAttacks) {
    EXPECT_TRUE(absl::StrContains(seen, absl::StrCat(attack_name, " URLError\n")) ||
                absl::StrContains(seen, absl::StrCat(attack_name, " TimeoutError\n")))
        << attack_name << " answered:\n"
        << seen;
  }
  // From the node itself, which reaches the ports, without the proxy: refused for want of the
  // proxy token.
  const CommandOutput from_node = RunCommand({"/usr/bin/python3", "-c", kAttack}, urls);
  for (const char* refused :
       {"jupyter-list-kernels 403", "jupyter-start-kernel 403", "jupyter-read-data 403",
        "jupyter-guessed-token 403", "jupyter-empty-query-token 403", "webui-list-jobs 401",
        "webui-generate 401", "webui-guessed-token 401"}) {
    EXPECT_TRUE(absl::StrContains(from_node.out, refused)) << refused << " not in:\n"
                                                           << from_node.out << from_node.err;
  }

  // The owner, through the proxy, gets in: the proxy sent the token the attacker lacks.
  EXPECT_EQ(OwnerGet(nb, 8888, "api/kernels"), "200");
  EXPECT_EQ(OwnerGet(sd, 7860, "api/jobs"), "200");

  // The token is the proxy's alone: no tenant answer and no log of the instance shows it.
  // (One test with the above: a Jupyter instance takes seconds to start.)
  instancepb::GetProxyTokenRequest req;
  req.set_instance_id("nb");
  instancepb::ProxyToken token;
  grpc::Status s = stack_->platform().access().GetProxyToken(
      PlatformStack::Ctx(stack_->platform().auth().ProxyToken()).get(), req, &token);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_GE(token.token().size(), 64u);
  // The owner may not read it either: a tenant's client never needs it.
  s = stack_->platform().access().GetProxyToken(PlatformStack::Ctx(victim_).get(), req, &token);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);

  instancepb::GetInstanceRequest get;
  get.set_instance_id("nb");
  instancepb::Instance got;
  ASSERT_TRUE(stack_->platform()
                  .instances()
                  .GetInstance(PlatformStack::Ctx(victim_).get(), get, &got)
                  .ok());
  EXPECT_FALSE(absl::StrContains(got.SerializeAsString(), token.token()));
  instancepb::ListInstancesRequest list;
  instancepb::ListInstancesResponse listed;
  ASSERT_TRUE(stack_->platform()
                  .instances()
                  .ListInstances(PlatformStack::Ctx(victim_).get(), list, &listed)
                  .ok());
  EXPECT_FALSE(absl::StrContains(listed.SerializeAsString(), token.token()));
  // Jupyter prints its URLs at start; a token it was given is shown as "...".
  const std::string logs = LogsUntil(victim_, "nb", "");
  EXPECT_TRUE(absl::StrContains(logs, "Jupyter Server")) << logs;
  EXPECT_FALSE(absl::StrContains(logs, token.token())) << logs;
}

}  // namespace
}  // namespace gpuaas::images_testing
