// An instance's whole life on the real platform: warm stock, a storage, a sandboxed workload
// that serves HTTP on its host port and writes into the storage; RUNNING once its probe passes;
// stop gives the GPU back and closes the usage interval; start runs it again; delete forgets it.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "libs/testing/eventually.h"
#include "libs/testing/pg_test.h"
#include "libs/testing/temp_dir.h"
#include "tests/platform/platform_stack.h"

namespace gpuaas::platform_testing {
namespace {

namespace fs = std::filesystem;
using gpuaas::testing::Eventually;

// An HTTP/1.0 GET to 127.0.0.1:port; the whole answer, or "" when nobody answers.
std::string HttpGet(int port, const std::string& path) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string answer;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    const std::string request = "GET " + path + " HTTP/1.0\r\nHost: localhost\r\n\r\n";
    if (write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size())) {
      char buf[4096];
      for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) answer.append(buf, n);
    }
  }
  close(fd);
  return answer;
}

bool Is(const instancepb::Instance& i, instancepb::State state) { return i.state() == state; }

class InstanceLifecycleTest : public gpuaas::testing::PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped()) return;
    stack_ = std::make_unique<PlatformStack>(dsn(), dir_.path());
    token_ = stack_->CreateTenant("studio-a");
    stack_->CreateSpecWithStocks("a100.1x", "A100-80GB", 1, 0, 2, 3600000000);
    stack_->CreateStorage(token_, "studio-a-data");
  }
  void TearDown() override {
    stack_.reset();
    PgTest::TearDown();
  }

  gpuaas::testing::TempDir dir_;
  std::unique_ptr<PlatformStack> stack_;
  std::string token_;
};

TEST_F(InstanceLifecycleTest, RunsStopsStartsAndBillsAWorkload) {
  instancepb::CreateInstanceRequest req;
  req.set_instance_id("web-1");
  req.set_spec_name("a100.1x");
  req.set_storage_id("studio-a-data");
  instancepb::Template* t = req.mutable_template_();
  // Writes into the storage, then serves this directory on its host port.
  t->set_cmd(
      "echo \"$GREETING from $GPUAAS_INSTANCE_ID on $CUDA_VISIBLE_DEVICES\" > /data/hello.txt && "
      "cd /data && exec python3 -m http.server \"$GPUAAS_PORT_8080\" --bind 0.0.0.0");
  instancepb::Port* port = t->add_ports();
  port->set_port(8080);
  port->set_is_probe(true);
  instancepb::Env* env = t->add_envs();
  env->set_name("GREETING");
  env->set_value("hello");
  instancepb::Volume* volume = t->add_volumes();
  volume->set_name("data");
  volume->set_mount_path("/data");

  instancepb::Instance created;
  grpc::Status s =
      stack_->instances().CreateInstance(PlatformStack::Ctx(token_).get(), req, &created);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(created.state(), instancepb::STATE_PENDING);

  instancepb::Instance running = stack_->WaitInstance(
      token_, "web-1", [](const auto& i) { return Is(i, instancepb::STATE_RUNNING); });
  ASSERT_EQ(running.state(), instancepb::STATE_RUNNING) << stack_->instance().Log();
  ASSERT_EQ(running.ports_size(), 1);
  EXPECT_EQ(running.ports(0).port(), 8080);
  ASSERT_EQ(running.gpu_uuids_size(), 1);
  EXPECT_EQ(running.node_id(), "node-a");
  const std::string page = HttpGet(running.ports(0).host_port(), "/hello.txt");
  EXPECT_NE(page.find("hello from web-1 on " + running.gpu_uuids(0)), std::string::npos) << page;
  EXPECT_EQ(stack_->ClaimedStocks().count("web-1"), 1u);

  instancepb::StopInstanceRequest stop;
  stop.set_instance_id("web-1");
  instancepb::Instance stopping;
  s = stack_->instances().StopInstance(PlatformStack::Ctx(token_).get(), stop, &stopping);
  ASSERT_TRUE(s.ok()) << s.error_message();
  instancepb::Instance stopped = stack_->WaitInstance(
      token_, "web-1", [](const auto& i) { return Is(i, instancepb::STATE_STOPPED); });
  EXPECT_EQ(stopped.reason(), instancepb::REASON_USER_REQUEST);
  EXPECT_TRUE(stopped.node_id().empty());
  EXPECT_EQ(stack_->ClaimedStocks().count("web-1"), 0u) << "stop returns the stock";
  EXPECT_EQ(HttpGet(running.ports(0).host_port(), "/hello.txt"), "") << "the workload is gone";

  instancepb::ListUsageRequest usage_req;
  usage_req.set_instance_id("web-1");
  instancepb::ListUsageResponse usage;
  s = stack_->instances().ListUsage(PlatformStack::Ctx(token_).get(), usage_req, &usage);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(usage.records_size(), 1);
  EXPECT_TRUE(usage.records(0).has_end_time()) << "the interval closed at stop";
  EXPECT_EQ(usage.records(0).price().micros_per_hour(), 3600000000);
  // 3600 units per hour is one unit per second: the amount is the seconds, in micros.
  EXPECT_EQ(usage.records(0).amount_micros(), usage.records(0).seconds() * 1000000);

  // Start again: a new run with a stock and the same storage, where the file still is.
  instancepb::StartInstanceRequest start;
  start.set_instance_id("web-1");
  instancepb::Instance restarted;
  s = stack_->instances().StartInstance(PlatformStack::Ctx(token_).get(), start, &restarted);
  ASSERT_TRUE(s.ok()) << s.error_message();
  running = stack_->WaitInstance(token_, "web-1",
                                 [](const auto& i) { return Is(i, instancepb::STATE_RUNNING); });
  ASSERT_EQ(running.state(), instancepb::STATE_RUNNING);
  EXPECT_NE(HttpGet(running.ports(0).host_port(), "/hello.txt").find("hello from web-1"),
            std::string::npos);

  instancepb::DeleteInstanceRequest del;
  del.set_instance_id("web-1");
  instancepb::Instance deleting;
  s = stack_->instances().DeleteInstance(PlatformStack::Ctx(token_).get(), del, &deleting);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_TRUE(Eventually(
      [&] {
        instancepb::GetInstanceRequest get;
        get.set_instance_id("web-1");
        instancepb::Instance gone;
        return stack_->instances()
                   .GetInstance(PlatformStack::Ctx(token_).get(), get, &gone)
                   .error_code() == grpc::StatusCode::NOT_FOUND;
      },
      absl::Seconds(30)));
  EXPECT_EQ(stack_->ClaimedStocks().count("web-1"), 0u);
  s = stack_->instances().ListUsage(PlatformStack::Ctx(token_).get(), usage_req, &usage);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(usage.records_size(), 2) << "usage outlives the instance";
  for (const auto& r : usage.records()) EXPECT_TRUE(r.has_end_time());
}

// The tenant's quotas from the auth service, at create and at start: RESOURCE_EXHAUSTED naming
// the quota; a stopped instance holds no GPU, so stopping one makes room.
TEST_F(InstanceLifecycleTest, QuotasRefuseCreatesAndStartsNamingTheQuota) {
  const std::string token = stack_->CreateTenant("tight", /*max_gpus=*/1, /*max_instances=*/2);
  auto create = [&](const std::string& id) {
    instancepb::CreateInstanceRequest req;
    req.set_instance_id(id);
    req.set_spec_name("a100.1x");
    req.mutable_template_()->set_cmd("exec sleep 3600");
    instancepb::Instance out;
    return stack_->instances().CreateInstance(PlatformStack::Ctx(token).get(), req, &out);
  };
  auto start = [&](const std::string& id) {
    instancepb::StartInstanceRequest req;
    req.set_instance_id(id);
    instancepb::Instance out;
    return stack_->instances().StartInstance(PlatformStack::Ctx(token).get(), req, &out);
  };
  auto stop = [&](const std::string& id) {
    instancepb::StopInstanceRequest req;
    req.set_instance_id(id);
    instancepb::Instance out;
    EXPECT_TRUE(stack_->instances().StopInstance(PlatformStack::Ctx(token).get(), req, &out).ok());
    stack_->WaitInstance(token, id, [](const auto& i) { return Is(i, instancepb::STATE_STOPPED); });
  };
  auto refused = [](const grpc::Status& s, const std::string& quota) {
    return s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED &&
           s.error_message().find("quota " + quota) != std::string::npos;
  };

  ASSERT_TRUE(create("q-1").ok());
  grpc::Status s = create("q-2");
  EXPECT_TRUE(refused(s, "max_gpus")) << s.error_message();
  stop("q-1");
  ASSERT_TRUE(create("q-2").ok()) << "a stopped instance holds no GPU";
  s = create("q-3");
  EXPECT_TRUE(refused(s, "max_instances")) << s.error_message();
  s = start("q-1");
  EXPECT_TRUE(refused(s, "max_gpus")) << s.error_message();
  stop("q-2");
  s = start("q-1");
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(stack_
                ->WaitInstance(token, "q-1",
                               [](const auto& i) { return Is(i, instancepb::STATE_RUNNING); })
                .state(),
            instancepb::STATE_RUNNING);
}

}  // namespace
}  // namespace gpuaas::platform_testing
