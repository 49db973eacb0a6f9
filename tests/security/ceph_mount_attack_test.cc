// Attacks with a node's cephx credential (issue 33): the key a node's agent is handed for one
// attachment, kept by a compromised node (or its thief), used for more than that attachment.
// Against a real Ceph cluster: GPUAAS_TEST_CEPH_DIR names the `ceph` fixture's directory
// (files `conf` and `keyring` holding the paths, libs/testing/ceph_test.h), or a cluster's own
// directory (ceph.conf, ceph.client.admin.keyring) for a run by hand. The
// subvolumes are made the way the ceph backend makes volumes (namespace-isolated, so the
// data pool's objects of one volume are in a RADOS namespace of its own).
#include <gtest/gtest.h>
#include <rados/librados.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "libs/testing/temp_dir.h"
#include "services/agent/runtime/ceph_fuse.h"
#include "services/agent/runtime/ceph_mounting_runtime.h"
#include "services/storage/ceph_mount/mount_credentials.h"
#include "services/storage/ceph_mount/mount_grants.h"
#include "services/storage/ceph_mount/rados_mgr.h"

namespace gpuaas::storage::ceph_mount {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

constexpr std::string_view kFs = "gpuaas";

// What the ceph backend answers for a volume: where it is, in the file system and in RADOS.
struct Subvolume {
  std::string name;
  std::string path;
  std::string data_pool;
  std::string pool_namespace;
};

// A shell command's exit status, bounded by `seconds` (a blocklisted client may hang).
int Shell(const std::string& command, int seconds = 30) {
  const int rc = std::system(
      absl::StrCat("timeout -k 5 ", seconds, " sh -c '", command, "' >/dev/null 2>&1").c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

class CephMountAttackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* dir = std::getenv("GPUAAS_TEST_CEPH_DIR");
    // Fails rather than skips: a run without a cluster has not tested this.
    ASSERT_NE(dir, nullptr) << "GPUAAS_TEST_CEPH_DIR is not set (the `ceph` test fixture)";
    conf_ = absl::StrCat(dir, "/ceph.conf");
    std::string keyring = absl::StrCat(dir, "/ceph.client.admin.keyring");
    if (fs::exists(fs::path(dir) / "conf")) {
      std::ifstream(fs::path(dir) / "conf") >> conf_;
      std::ifstream(fs::path(dir) / "keyring") >> keyring;
    }
    // As the storage service holds them: the admin's connections, here and nowhere else (the
    // mgr's also makes the subvolumes, as the backend's does).
    const RadosConfig admin{.conf_path = conf_, .keyring_path = keyring, .client_id = "admin"};
    absl::StatusOr<std::unique_ptr<RadosMgr>> mgr = RadosMgr::Connect(admin);
    ASSERT_TRUE(mgr.ok()) << mgr.status();
    admin_ = *std::move(mgr);
    absl::StatusOr<std::unique_ptr<MountGrants>> grants =
        MountGrants::Connect(*admin_, admin, std::string(kFs));
    ASSERT_TRUE(grants.ok()) << grants.status();
    grants_ = *std::move(grants);
    creds_ = &grants_->credentials();
    // As the backend answers CephMount.monitors.
    monitors_ = grants_->monitors();
    ASSERT_FALSE(monitors_.empty());
    const std::string run = absl::StrCat(getpid(), "-", std::rand() % 100000);
    victim_ = MakeSubvolume("atk-victim-" + run);
    own_ = MakeSubvolume("atk-own-" + run);
    ASSERT_FALSE(HasFailure());
    attachment_ = "atk-" + run;
    keyring_dir_ = dir_.path() / "agent-private";
    fs::create_directories(keyring_dir_);
    fs::permissions(keyring_dir_, fs::perms::owner_all);
  }

  void TearDown() override {
    for (const fs::path& m : mounts_) {
      EXPECT_TRUE(agent::UnmountCephFuse(m.string()).ok()) << m;
    }
    if (creds_ != nullptr) {
      EXPECT_TRUE(creds_->Revoke(own_.name, attachment_).ok());
      for (const Subvolume* s : {&victim_, &own_}) {
        if (s->name.empty()) continue;
        EXPECT_TRUE(admin_
                        ->Command(Json{
                            {"prefix", "fs subvolume rm"},
                            {"vol_name", kFs},
                            {"sub_name", s->name},
                            {"force",
                             true}}.dump())
                        .ok());
      }
    }
  }

  Subvolume MakeSubvolume(const std::string& name) {
    Subvolume s{.name = name};
    absl::StatusOr<std::string> made = admin_->Command(Json{
        {"prefix", "fs subvolume create"},
        {"vol_name", kFs},
        {"sub_name", name},
        {"size", 64 << 20},
        {"namespace_isolated", true}}.dump());
    EXPECT_TRUE(made.ok()) << made.status();
    absl::StatusOr<std::string> info = admin_->Command(
        Json{{"prefix", "fs subvolume info"}, {"vol_name", kFs}, {"sub_name", name}}.dump());
    EXPECT_TRUE(info.ok()) << info.status();
    if (!info.ok()) return s;
    Json j = Json::parse(*info);
    s.path = j.value("path", "");
    s.data_pool = j.value("data_pool", "");
    s.pool_namespace = j.value("pool_namespace", "");
    EXPECT_FALSE(s.pool_namespace.empty()) << *info;
    return s;
  }

  agent::CephFuseSource Source(const Subvolume& s, const std::string& client_id) {
    return {
        .monitors = monitors_, .fs_name = std::string(kFs), .path = s.path, .client_id = client_id};
  }

  // Mounts as the agent does; remembered for TearDown when it worked.
  absl::Status AgentMount(const agent::CephFuseSource& source, const std::string& key,
                          const fs::path& at) {
    absl::Status s = agent::MountCephFuse(source, key, keyring_dir_.string(), at.string());
    if (s.ok()) mounts_.push_back(at);
    return s;
  }

  // ceph-fuse as an attacker runs it with a stolen key: any path, the root included.
  int AttackerMount(const MountCredential& c, const std::string& path, const fs::path& at) {
    const fs::path keyring = dir_.path() / "stolen.keyring";
    { std::ofstream(keyring) << "[client." << c.client_id << "]\n\tkey = " << c.key << "\n"; }
    fs::create_directories(at);
    const int rc =
        Shell(absl::StrCat("ceph-fuse --conf=/dev/null --id ", c.client_id,
                           " --keyring=", keyring.string(), " --mon_host=", monitors_[0],
                           " --client_fs=", std::string(kFs),
                           " --admin_socket= --log_file=/dev/null -r ", path, " ", at.string()),
              90);
    if (rc == 0) mounts_.push_back(at);
    return rc;
  }

  // Writes one RADOS object into `pool`/`ns` with the credential: the data path a stolen key
  // could take around the MDS.
  int RadosWrite(const MountCredential& c, const std::string& pool, const std::string& ns) {
    const fs::path keyring = dir_.path() / "rados.keyring";
    { std::ofstream(keyring) << "[client." << c.client_id << "]\n\tkey = " << c.key << "\n"; }
    rados_t cluster = nullptr;
    if (int rc = rados_create(&cluster, c.client_id.c_str()); rc < 0) return rc;
    rados_conf_set(cluster, "mon_host", admin_->MonHost().c_str());
    rados_conf_set(cluster, "keyring", keyring.c_str());
    rados_conf_set(cluster, "rados_osd_op_timeout", "20");
    rados_conf_set(cluster, "rados_mon_op_timeout", "20");
    int rc = rados_connect(cluster);
    if (rc == 0) {
      rados_ioctx_t io = nullptr;
      rc = rados_ioctx_create(cluster, pool.c_str(), &io);
      if (rc == 0) {
        rados_ioctx_set_namespace(io, ns.c_str());
        rc = rados_write_full(io, "gpuaas-attack-probe", "x", 1);
        rados_ioctx_destroy(io);
      }
    }
    rados_shutdown(cluster);
    return rc;
  }

  gpuaas::testing::TempDir dir_;
  std::string conf_;
  std::unique_ptr<RadosMgr> admin_;
  std::unique_ptr<MountGrants> grants_;
  MountCredentials* creds_ = nullptr;
  std::vector<std::string> monitors_;
  Subvolume victim_;
  Subvolume own_;
  std::string attachment_;
  fs::path keyring_dir_;
  std::vector<fs::path> mounts_;
};

TEST_F(CephMountAttackTest, AnAttachmentsKeyReachesItsOwnSubvolumeAndNothingElse) {
  absl::StatusOr<MountCredential> c = creds_->Grant(own_.name, attachment_, /*read_only=*/false);
  ASSERT_TRUE(c.ok()) << c.status();

  // What the key is for: the agent mounts its own subvolume and the workload writes there.
  const fs::path own_mount = dir_.path() / "own";
  ASSERT_TRUE(AgentMount(Source(own_, c->client_id), c->key, own_mount).ok());
  std::ofstream(own_mount / "f.txt") << "mine";
  std::string read;
  std::ifstream(own_mount / "f.txt") >> read;
  EXPECT_EQ(read, "mine");
  EXPECT_TRUE(fs::is_empty(keyring_dir_)) << "the keyring outlived the mount";

  // The same key on another tenant's subvolume, on the volumes' parent, on the fs root.
  EXPECT_FALSE(AgentMount(Source(victim_, c->client_id), c->key, dir_.path() / "victim").ok());
  EXPECT_NE(AttackerMount(*c, victim_.path, dir_.path() / "victim2"), 0);
  EXPECT_NE(AttackerMount(*c, "/", dir_.path() / "root"), 0);
  EXPECT_NE(AttackerMount(*c, "/volumes/_nogroup", dir_.path() / "group"), 0);
  EXPECT_TRUE(fs::is_empty(keyring_dir_));

  // Around the MDS, straight to the data pool: only its own volume's namespace.
  EXPECT_EQ(RadosWrite(*c, own_.data_pool, own_.pool_namespace), 0);
  EXPECT_LT(RadosWrite(*c, victim_.data_pool, victim_.pool_namespace), 0);
  EXPECT_LT(RadosWrite(*c, victim_.data_pool, ""), 0);
}

TEST_F(CephMountAttackTest, ARevokedKeyNeitherMountsAgainNorKeepsItsMount) {
  absl::StatusOr<MountCredential> c = creds_->Grant(own_.name, attachment_, /*read_only=*/false);
  ASSERT_TRUE(c.ok()) << c.status();
  // Granting again (a retried attach) answers the same key.
  absl::StatusOr<MountCredential> again = creds_->Grant(own_.name, attachment_, false);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->key, c->key);

  const fs::path mount = dir_.path() / "own";
  ASSERT_TRUE(AgentMount(Source(own_, c->client_id), c->key, mount).ok());
  ASSERT_EQ(Shell(absl::StrCat("echo before > ", (mount / "before.txt").string())), 0);

  // Detach.
  ASSERT_TRUE(creds_->Revoke(own_.name, attachment_).ok());
  // A retried detach.
  ASSERT_TRUE(creds_->Revoke(own_.name, attachment_).ok());

  // The mount made before: evicted (blocklisted), it neither writes nor reads.
  EXPECT_NE(Shell(absl::StrCat("echo after > ", (mount / "after.txt").string())), 0);
  EXPECT_NE(Shell(absl::StrCat("ls ", mount.string(), " && cat ", (mount / "before.txt").string(),
                               " | grep -q before")),
            0);
  // A new mount with the kept key.
  EXPECT_FALSE(AgentMount(Source(own_, c->client_id), c->key, dir_.path() / "again").ok());
  EXPECT_NE(AttackerMount(*c, own_.path, dir_.path() / "again2"), 0);
  EXPECT_LT(RadosWrite(*c, own_.data_pool, own_.pool_namespace), 0);
}

// The kept key mounted on a directory inside its own subvolume before detach: `fs subvolume
// evict` matches a client by the exact root it mounted, so it alone let this mount read and
// write on after detach; every session of the id is evicted now.
TEST_F(CephMountAttackTest, AMountOfADirectoryInsideTheSubvolumeDoesNotOutliveRevoke) {
  absl::StatusOr<MountCredential> c = creds_->Grant(own_.name, attachment_, /*read_only=*/false);
  ASSERT_TRUE(c.ok()) << c.status();
  const fs::path own_mount = dir_.path() / "own";
  ASSERT_TRUE(AgentMount(Source(own_, c->client_id), c->key, own_mount).ok());
  fs::create_directories(own_mount / "data");
  const fs::path inner = dir_.path() / "inner";
  ASSERT_EQ(AttackerMount(*c, own_.path + "/data", inner), 0);
  ASSERT_EQ(Shell(absl::StrCat("echo before > ", (inner / "before.txt").string())), 0);

  ASSERT_TRUE(creds_->Revoke(own_.name, attachment_).ok());

  EXPECT_NE(Shell(absl::StrCat("echo after > ", (inner / "after.txt").string())), 0);
  EXPECT_NE(Shell(absl::StrCat("ls ", inner.string(), " && cat ", (inner / "before.txt").string(),
                               " | grep -q before")),
            0);
}

// Stands for the process or container runtime: at Start, writes through the directory it would
// bind, as the workload would.
class WritingRuntime final : public agent::Runtime {
 public:
  absl::Status Start(const instance::v1::Workload& w) override {
    host_path = w.mounts(0).host_path();
    std::ofstream(fs::path(host_path) / "from-workload.txt") << "hello";
    started = w.workload_id();
    return absl::OkStatus();
  }
  absl::Status Stop(std::string_view) override { return absl::OkStatus(); }
  absl::Status Remove(std::string_view) override {
    started.clear();
    return absl::OkStatus();
  }
  std::vector<instance::v1::WorkloadStatus> List() const override {
    std::vector<instance::v1::WorkloadStatus> out;
    if (!started.empty()) out.emplace_back().set_workload_id(started);
    return out;
  }
  void OnChange(std::function<void()>) override {}
  std::string host_path;
  std::string started;
};

bool Mounted(const fs::path& at) {
  std::ifstream mounts("/proc/self/mounts");
  std::string line;
  while (std::getline(mounts, line)) {
    if (line.find(" " + at.string() + " ") != std::string::npos) return true;
  }
  return false;
}

// The agent's whole path on a real cluster: the key fetched (here straight from the grant, as
// GetMountCredential answers it), ceph-fuse mounted where the runtime binds, unmounted at remove.
TEST_F(CephMountAttackTest, TheAgentMountsAWorkloadsStorageAndUnmountsItAtRemove) {
  auto inner = std::make_unique<WritingRuntime>();
  WritingRuntime* writer = inner.get();
  const fs::path mounts = dir_.path() / "agent-mounts";
  agent::CephMountingRuntime runtime(
      std::move(inner),
      [this](const std::string&, const std::string&) -> absl::StatusOr<agent::CephKey> {
        absl::StatusOr<MountCredential> c = creds_->Grant(own_.name, attachment_, false);
        if (!c.ok()) return c.status();
        return agent::CephKey{.client_id = c->client_id, .key = c->key};
      },
      agent::CephFuseMounter(keyring_dir_.string()), mounts.string());
  instance::v1::Workload w;
  w.set_workload_id("ins-1.1");
  w.set_instance_id("ins-1");
  instance::v1::Mount* m = w.add_mounts();
  m->set_mount_path("/data");
  instance::v1::CephVolume* c = m->mutable_ceph();
  c->set_storage_id("models");
  for (const std::string& mon : monitors_) c->add_monitors(mon);
  c->set_fs_name(std::string(kFs));
  c->set_path(own_.path);
  c->set_client_id(CephClientId(attachment_));

  ASSERT_TRUE(runtime.Start(w).ok());
  ASSERT_FALSE(writer->host_path.empty());
  EXPECT_TRUE(Mounted(writer->host_path)) << writer->host_path;
  // The runtime shares the tree with the tenant's group by a default ACL (ShareTreeWith), as on
  // a local storage: the mount takes one (u::rwx g::rwx o::---).
  struct AclEntry {
    uint16_t tag, perm;
    uint32_t id;
  };
  struct {
    uint32_t version = 2;
    AclEntry e[3] = {{0x01, 7, ~0u}, {0x04, 7, ~0u}, {0x20, 0, ~0u}};
  } acl;
  EXPECT_EQ(setxattr(writer->host_path.c_str(), "system.posix_acl_default", &acl, sizeof acl, 0), 0)
      << strerror(errno);
  EXPECT_TRUE(fs::is_empty(keyring_dir_));

  ASSERT_TRUE(runtime.Remove("ins-1.1").ok());
  EXPECT_FALSE(Mounted(writer->host_path));
  EXPECT_FALSE(fs::exists(mounts / "ins-1.1"));

  // What the workload wrote is in the subvolume.
  absl::StatusOr<MountCredential> cred = creds_->Grant(own_.name, attachment_, false);
  ASSERT_TRUE(cred.ok());
  const fs::path check = dir_.path() / "check";
  ASSERT_TRUE(AgentMount(Source(own_, cred->client_id), cred->key, check).ok());
  std::string read;
  std::ifstream(check / "from-workload.txt") >> read;
  EXPECT_EQ(read, "hello");
}

}  // namespace
}  // namespace gpuaas::storage::ceph_mount
