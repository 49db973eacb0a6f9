// The catalog's `jupyter` image end to end on the real platform: a notebook server in a sandbox
// on a storage, reached over Jupyter's REST API and a kernel's WebSocket the way a notebook
// does; what a cell writes lands in the storage (read back over S3) and is still there when the
// instance is started again on another node.
#include <gtest/gtest.h>

#include "libs/testing/pg_test.h"
#include "libs/testing/temp_dir.h"
#include "tests/images/image_stack.h"
#include "tests/images/test_registry.h"

namespace gpuaas::images_testing {
namespace {

namespace stockpb = ::gpuaas::stock::v1;

class JupyterImageTest : public gpuaas::testing::PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped()) return;
    // One GPU per node and a stock on each, so draining one node leaves the other's.
    stack_ = std::make_unique<ImageStack>(
        dsn(), dir_.path(),
        std::vector<AgentSpec>{{"node-a", "1xA100-80GB"}, {"node-b", "1xA100-80GB"}});
    token_ = stack_->platform().CreateTenant("lab");
    stack_->platform().CreateSpecWithStocks("a100.1x", "A100-80GB", 1, 0, 2);
    stack_->platform().CreateStorage(token_, "notebooks");
  }
  void TearDown() override {
    stack_.reset();
    PgTest::TearDown();
  }

  // Runs `code` in a new kernel of the instance's Jupyter; the client's JSON answer.
  nlohmann::json Cell(const instancepb::Instance& instance, const std::string& code) {
    std::vector<std::string> args = stack_->AccessFlags(instance, 8888, token_);
    args.push_back(code);
    nlohmann::json answer;
    const CommandOutput r = stack_->RunClient("jupyter_exec.py", args, &answer);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    return answer;
  }

  gpuaas::testing::TempDir dir_;
  std::unique_ptr<ImageStack> stack_;
  std::string token_;
};

TEST_F(JupyterImageTest, RunsCellsWritesTheStorageAndKeepsItOnAnotherNode) {
  instancepb::Instance nb = stack_->RunImage(token_, "nb-1", "jupyter", "notebooks");
  ASSERT_EQ(nb.state(), instancepb::STATE_RUNNING);
  EXPECT_EQ(nb.image(), "jupyter:1.23.3");
  // The OCI image from the registry, pinned by digest when the catalog took it.
  const absl::StatusOr<images_testing::TestRegistry> registry = images_testing::OpenTestRegistry();
  ASSERT_TRUE(registry.ok()) << registry.status();
  EXPECT_EQ(nb.image_reference(), registry->Image("jupyter")->digest_reference);
  const std::string first_node = nb.node_id();

  nlohmann::json answer = Cell(nb, "1+1");
  EXPECT_EQ(answer.value("result", ""), "2") << answer;

  // A relative path: the kernel starts in Jupyter's root_dir, which is the storage's mount.
  answer = Cell(nb,
                "import os\n"
                "with open('hello.txt', 'w') as f:\n"
                "    f.write('written by ' + os.environ['GPUAAS_INSTANCE_ID'])\n"
                "print(os.path.realpath('hello.txt'))");
  EXPECT_EQ(answer.value("stdout", ""), "/data/hello.txt\n") << answer;
  EXPECT_EQ(stack_->S3Get(token_, "notebooks", "hello.txt"), "written by nb-1");

  stack_->Stop(token_, "nb-1");
  // Maintenance on the node it ran on: its free stock goes, so the start must land elsewhere.
  stockpb::DrainNodeRequest drain;
  drain.set_node_id(first_node);
  stockpb::Node drained;
  const grpc::Status s = stack_->platform().stock_stub().DrainNode(
      PlatformStack::Ctx(stack_->platform().admin_token()).get(), drain, &drained);
  ASSERT_TRUE(s.ok()) << s.error_message();

  nb = stack_->Start(token_, "nb-1");
  ASSERT_EQ(nb.state(), instancepb::STATE_RUNNING);
  EXPECT_NE(nb.node_id(), first_node);
  answer = Cell(nb, "print(open('/data/hello.txt').read())");
  EXPECT_EQ(answer.value("stdout", ""), "written by nb-1\n") << answer;
  EXPECT_EQ(stack_->S3Get(token_, "notebooks", "hello.txt"), "written by nb-1");

  // And the kernel's errors come back as errors, not as output.
  std::vector<std::string> args = stack_->AccessFlags(nb, 8888, token_);
  args.push_back("1/0");
  const CommandOutput failed = stack_->RunClient("jupyter_exec.py", args, &answer);
  EXPECT_EQ(failed.exit_code, 1) << failed.out << failed.err;
  EXPECT_NE(answer.value("error", "").find("ZeroDivisionError"), std::string::npos) << answer;
}

// A template moves the port's base_url (the proxy's access URL and the probe follow it) and
// says the same to Jupyter through JUPYTER_BASE_URL, as the image's README asks.
TEST_F(JupyterImageTest, ServesUnderTheBaseUrlATemplateGives) {
  instancepb::Template tmpl;
  instancepb::Port* port = tmpl.add_ports();
  port->set_port(8888);
  port->set_is_probe(true);
  port->set_base_url("/notebooks");
  instancepb::Env* env = tmpl.add_envs();
  env->set_name("JUPYTER_BASE_URL");
  env->set_value("/notebooks");
  const instancepb::Instance nb = stack_->RunImage(token_, "nb-2", "jupyter", "notebooks", tmpl);
  ASSERT_EQ(nb.state(), instancepb::STATE_RUNNING);

  std::vector<std::string> args = stack_->AccessFlags(nb, 8888, token_);
  const std::string root_url = args.at(1);
  args.at(1) = root_url + "notebooks/";
  args.push_back("6*7");
  nlohmann::json answer;
  const CommandOutput r = stack_->RunClient("jupyter_exec.py", args, &answer);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(answer.value("result", ""), "42") << answer;
  // Nothing of Jupyter's API outside it (through the proxy, as the owner: args holds --host H
  // --header "Authorization: ...").
  ASSERT_EQ(args.at(2), "--host");
  ASSERT_EQ(args.at(4), "--header");
  const CommandOutput outside =
      RunCommand({"/usr/bin/curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "--noproxy", "*",
                  "-H", "Host: " + args.at(3), "-H", args.at(5), root_url + "api/kernelspecs"},
                 {});
  EXPECT_EQ(outside.out, "404");
}

}  // namespace
}  // namespace gpuaas::images_testing
