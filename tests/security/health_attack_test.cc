// Streams that need no token: grpc.health.v1.Health/Watch (load balancers, our replica
// channels) and reflection (grpcurl) answer anyone who reaches a service port, a tenant's CLI
// included. An outsider opens them by the hundred over several connections to hold the
// service's memory and, for reflection, a thread each; the real instance service refuses it
// past its per-address share while its tenants' calls, Health/Check and another address's
// Watch go on.
#include <arpa/inet.h>
#include <grpcpp/create_channel_posix.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "libs/rpc/echo_test_service.h"
#include "libs/rpc/held_streams_test_util.h"
#include "libs/testing/pg_test.h"
#include "libs/testing/temp_dir.h"
#include "tests/platform/platform_stack.h"

namespace gpuaas::platform_testing {
namespace {

using rpc::test::HeldStreams;
using rpc::test::kHealthWatchMethod;
using rpc::test::kReflectionInfoMethod;

constexpr int kPerClientCap = 128;  // rpc::ServerOptions' default

// A plaintext channel to 127.0.0.1:`port` whose connection comes from 127.0.0.2: gRPC's client
// cannot choose a source address, so the socket is connected here and handed over.
std::shared_ptr<grpc::Channel> ChannelFrom127002(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in from{.sin_family = AF_INET, .sin_port = 0, .sin_addr = {}, .sin_zero = {}};
  inet_pton(AF_INET, "127.0.0.2", &from.sin_addr);
  sockaddr_in to{.sin_family = AF_INET, .sin_port = htons(port), .sin_addr = {}, .sin_zero = {}};
  inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0 ||
      connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
    if (fd >= 0) close(fd);
    return nullptr;
  }
  return grpc::CreateInsecureChannelFromFd("127.0.0.1", fd);
}

class HealthAttackTest : public gpuaas::testing::PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped()) return;
    stack_ = std::make_unique<PlatformStack>(dsn(), dir_.path());
    tenant_ = stack_->CreateTenant("acme");
  }

  gpuaas::testing::TempDir dir_;
  std::unique_ptr<PlatformStack> stack_;
  std::string tenant_;
};

TEST_F(HealthAttackTest, OneAddressCannotHoldWatchAndReflectionStreamsWithoutEnd) {
  const std::string address = stack_->instance().address();
  const int port = std::stoi(address.substr(address.rfind(':') + 1));
  // Four connections, as many as an attacker likes: the share is the address's.
  std::vector<std::unique_ptr<HeldStreams>> attack;
  for (int i = 0; i < 4; ++i) {
    grpc::ChannelArguments args;
    args.SetInt("attack.connection", i);
    attack.push_back(std::make_unique<HeldStreams>(
        grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args)));
  }
  for (int i = 0; i < 40; ++i) {
    attack[i % 4]->Open(kHealthWatchMethod, 4, "");
    attack[i % 4]->Open(kReflectionInfoMethod, 1);
  }
  const int opened = 200;
  const int refused_wanted = opened - kPerClientCap;
  // The refusals come back on whichever connections carried them.
  int refused = 0;
  for (absl::Time until = absl::Now() + absl::Seconds(5);
       refused < refused_wanted && absl::Now() < until;) {
    refused = 0;
    for (auto& streams : attack) {
      refused += static_cast<int>(streams->Ended(absl::Milliseconds(20)).size());
    }
  }
  for (auto& streams : attack) {
    for (const grpc::Status& s : streams->Ended(absl::ZeroDuration())) {
      EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
      EXPECT_NE(s.error_message().find("per client address"), std::string::npos)
          << s.error_message();
    }
  }
  EXPECT_EQ(refused, refused_wanted) << "the address held more than its share";

  // The tenant's own calls are not such streams and go on.
  instancepb::ListInstancesRequest list;
  instancepb::ListInstancesResponse listed;
  grpc::Status listing =
      stack_->instances().ListInstances(PlatformStack::Ctx(tenant_).get(), list, &listed);
  EXPECT_TRUE(listing.ok()) << listing.error_message();
  auto channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  EXPECT_EQ(rpc::test::CheckHealth(channel, "").value_or(-1), 1);  // SERVING

  // Another address (a load balancer, a replica channel elsewhere) still watches.
  std::shared_ptr<grpc::Channel> other = ChannelFrom127002(port);
  ASSERT_NE(other, nullptr) << "cannot connect from 127.0.0.2";
  HeldStreams watcher(other);
  watcher.Open(kHealthWatchMethod, 1, "");
  EXPECT_TRUE(watcher.Ended(absl::Milliseconds(500)).empty());
}

}  // namespace
}  // namespace gpuaas::platform_testing
