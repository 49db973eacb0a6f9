// The storage service as replicas (issue 33): two gpuaas-storage processes on the ceph backend
// alone (--local-backend=false: each data root holds only its ceph-fuse mount point), behind one
// gRPC address "a,b" and one S3 port they both listen on (--s3-share-port). Four clients of a
// tenant call steadily: GetStorage, a read-only attach and its detach as the instance service
// makes them, an S3 PUT of a new object and a GET of it; the first replica gets SIGKILL in the
// middle. No gRPC call may fail (the channel repeats them); an S3 request the kill cuts off is
// sent once more on a new connection, as AWS's SDKs do (also when the reply stops short of its
// Content-Length), and must then succeed. Afterwards every
// object written is there with its bytes, nothing else is, and no attachment is left.
#include <gtest/gtest.h>
#include <sys/mount.h>

#include <cstdio>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "libs/client/channel.h"
#include "libs/rpc/metrics_scrape_test_util.h"
#include "libs/testing/service_dsn.h"
#include "services/storage/s3/testing/raw_client.h"
#include "tests/common/replica_kill_drill.h"
#include "tests/storage/storage_ceph_test_base.h"

namespace gpuaas::storage::testing {
namespace {

using gpuaas::testing::DrillResult;
using gpuaas::testing::ReplicaKillDrill;
using gpuaas::testing::ReplicaProcess;
using gpuaas::testing::TimedCall;
using s3::testing::HttpReply;
using s3::testing::RawRequest;
using s3::testing::Send;

constexpr int kClients = 4;
constexpr size_t kObjectBytes = 64 << 10;

// S3 requests the process at `metrics_port` answered (gpuaas_s3_requests_total).
double ServedS3(int metrics_port) {
  absl::StatusOr<std::string> text = rpc::test::ScrapeMetrics(metrics_port);
  if (!text.ok()) return 0;  // a killed replica
  absl::StatusOr<rpc::test::Exposition> parsed = rpc::test::Exposition::Parse(*text);
  if (!parsed.ok()) return 0;
  double sum = 0;
  for (const auto& sample : parsed->All("gpuaas_s3_requests_total")) sum += sample.value;
  return sum;
}

class StorageReplicaDrillTest : public StorageCephTest {
 protected:
  void SetUp() override {
    StorageCephTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    CreateCephSpec("ceph-1g", "1Gi");
    ASSERT_TRUE(CreateStorage(member_, "shared", "ceph-1g").ok());
    pb::CreateAccessorResponse accessor;
    ASSERT_TRUE(CreateAccessor(member_, "shared", &accessor).ok());
    key_ = {accessor.access_key_id(), accessor.secret_access_key()};

    ASSERT_OK_AND_ASSIGN(const ceph::ClusterOptions cluster, ceph::TestClusterOptions());
    s3_port_ = gpuaas::testing::FreePort();
    replicas_ = gpuaas::testing::StartReplicas(
        GPUAAS_STORAGE_BINARY, "storage",
        {"--db-dsn=" + gpuaas::testing::ServiceDsn(dsn(), "storage"),
         "--auth-addr=" + stack_->address(), "--secret-key-file=" + data_root() + ".key",
         "--data-root=" + (dir_.path() / "replica-{replica}").string(), "--local-backend=false",
         "--ceph-conf=" + cluster.conf_path, "--ceph-keyring=" + cluster.keyring_path,
         absl::StrCat("--s3-listen=127.0.0.1:", s3_port_), "--s3-share-port"},
        dir_.path());
    ASSERT_EQ(replicas_.size(), 2u);
    ASSERT_OK_AND_ASSIGN(std::shared_ptr<grpc::Channel> channel,
                         client::OpenChannel(gpuaas::testing::AddressList(replicas_), {}));
    replica_stub_ = pb::StorageService::NewStub(channel);
  }

  void TearDown() override {
    for (int i = 0; i < static_cast<int>(replicas_.size()); ++i) {
      if (replicas_[i].process) replicas_[i].process->Terminate();  // unmounts its ceph-fuse
      // The killed one's ceph-fuse outlives it, mounted: detached here (it then exits), or
      // removing the test's directory would go on into the cluster's file system.
      const std::string mount = (dir_.path() / absl::StrCat("replica-", i) / "ceph-mount").string();
      ::umount2(mount.c_str(), MNT_DETACH);
    }
    StorageCephTest::TearDown();
  }

  // One S3 request; a reply the kill cut (none, or part of one) is asked for again once.
  HttpReply S3(const RawRequest& request, int& resent) {
    HttpReply reply = Send(s3_port_, request);
    if (!reply.complete) {
      ++resent;
      reply = Send(s3_port_, request);
    }
    return reply;
  }

  static absl::Status Expect200(const char* what, const HttpReply& reply) {
    if (reply.status == 200) return absl::OkStatus();
    return absl::InternalError(absl::StrCat(what, ": HTTP ", reply.status, " ", reply.body));
  }

  gpuaas::testing::DrillRound Round() {
    return [this](int client, int round, const TimedCall& timed) {
      const std::string instance = absl::StrCat("nb-", client, "-", round);
      timed("GetStorage", [&] {
        pb::GetStorageRequest req;
        req.set_storage_id("shared");
        pb::Storage out;
        return FromGrpc(replica_stub_->GetStorage(Ctx(member_).get(), req, &out));
      });
      timed("AttachStorage", [&] {
        pb::AttachStorageRequest req;
        req.set_storage_id("shared");
        req.set_tenant_id("alpha");
        req.set_instance_id(instance);
        req.set_node_id("node-1");
        req.set_read_only(true);
        pb::Attachment out;
        return FromGrpc(replica_stub_->AttachStorage(Ctx(service_).get(), req, &out));
      });
      timed("DetachStorage", [&] {
        pb::DetachStorageRequest req;
        req.set_storage_id("shared");
        req.set_instance_id(instance);
        pb::DetachStorageResponse out;
        return FromGrpc(replica_stub_->DetachStorage(Ctx(service_).get(), req, &out));
      });
      const std::string key = absl::StrCat("drill/", client, "-", round);
      const std::string body(kObjectBytes, static_cast<char>('a' + (client + round) % 26));
      int resent = 0;
      timed("PutObject", [&] {
        RawRequest put{.method = "PUT", .path = "/shared/" + key, .body = body, .key = key_};
        absl::Status s = Expect200("PUT", S3(put, resent));
        if (s.ok()) {
          absl::MutexLock lock(&mu_);
          written_[key] = body;
        }
        return s;
      });
      timed("GetObject", [&] {
        RawRequest get{.path = "/shared/" + key, .key = key_};
        HttpReply got = S3(get, resent);
        if (got.status == 200 && got.body != body) return absl::DataLossError(key);
        return Expect200("GET", got);
      });
      absl::MutexLock lock(&mu_);
      resent_ += resent;
    };
  }

  static absl::Status FromGrpc(const grpc::Status& s) {
    return s.ok() ? absl::OkStatus()
                  : absl::Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
  }

  int s3_port_ = 0;
  s3::testing::TestKey key_;
  std::vector<ReplicaProcess> replicas_;
  std::unique_ptr<pb::StorageService::Stub> replica_stub_;
  absl::Mutex mu_;
  std::map<std::string, std::string> written_ ABSL_GUARDED_BY(mu_);
  int resent_ ABSL_GUARDED_BY(mu_) = 0;
};

TEST_F(StorageReplicaDrillTest, KillNineOneReplicaUnderS3AndAttachLoadLosesNothing) {
  // Both answer on the one S3 port: the kernel spreads the connections.
  for (int i = 0; i < 20; ++i) {
    RawRequest put{
        .method = "PUT", .path = absl::StrCat("/shared/warm/", i), .body = "w", .key = key_};
    ASSERT_EQ(Send(s3_port_, put).status, 200);
  }
  EXPECT_GT(ServedS3(replicas_[0].metrics_port), 0);
  const double s3_before_survivor = ServedS3(replicas_[1].metrics_port);
  EXPECT_GT(s3_before_survivor, 0);
  const DrillResult r =
      ReplicaKillDrill(replicas_, absl::Seconds(4), absl::Seconds(5)).Run(kClients, Round());
  absl::MutexLock lock(&mu_);
  std::printf("storage replica kill drill: %s; %d S3 requests sent again after a cut\n",
              r.Summary().c_str(), resent_);
  EXPECT_EQ(r.failed, 0);
  EXPECT_EQ(r.failures, std::vector<std::string>{});
  EXPECT_GT(r.victim_served_before_kill, 0);
  EXPECT_GT(r.started_after_signal, 0);
  EXPECT_GT(r.survivor_served_after_kill, 0);
  EXPECT_GT(r.calls_by_method.at("PutObject"), 0);
  EXPECT_GT(ServedS3(replicas_[1].metrics_port), s3_before_survivor);

  // Every object acknowledged is there with its bytes, from the survivor; nothing else is.
  std::set<std::string> listed;
  for (const auto& [key, body] : written_) {
    RawRequest get{.path = "/shared/" + key, .key = key_};
    HttpReply got = Send(s3_port_, get);
    EXPECT_EQ(got.status, 200) << key;
    EXPECT_TRUE(got.body == body) << key << ": " << got.body.size() << " bytes";
  }
  RawRequest list{
      .path = "/shared", .query = "list-type=2&prefix=drill%2F&max-keys=1000", .key = key_};
  HttpReply listing = Send(s3_port_, list);
  ASSERT_EQ(listing.status, 200) << listing.body;
  size_t keys = 0;
  for (size_t at = listing.body.find("<Key>"); at != std::string::npos;
       at = listing.body.find("<Key>", at + 1)) {
    ++keys;
  }
  EXPECT_EQ(keys, written_.size());
  pb::Storage shared;
  ASSERT_TRUE(GetStorage(member_, "shared", &shared).ok());
  EXPECT_EQ(shared.attachments_size(), 0);
}

}  // namespace
}  // namespace gpuaas::storage::testing
