#include "libs/testing/ceph_test.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "libs/common/status_macros.h"

namespace gpuaas::testing {
namespace {

constexpr char kFixtureDirEnv[] = "GPUAAS_TEST_CEPH_DIR";
constexpr char kHow[] =
    "run through ctest (the test needs FIXTURES ceph, tests/ceph_fixture), or start a cluster "
    "with tools/ceph-cluster and write its ceph.conf and admin keyring paths into "
    "$GPUAAS_TEST_CEPH_DIR/conf and /keyring";

// The first line of DIR/NAME, which must name an existing file.
absl::StatusOr<std::string> PathIn(const std::string& dir, const char* name) {
  const std::string file = absl::StrCat(dir, "/", name);
  std::ifstream in(file);
  std::string path;
  if (!in || !std::getline(in, path) || path.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("no Ceph from the fixture `ceph`: cannot read ", file, "; ", kHow));
  }
  if (!std::filesystem::exists(path)) {
    return absl::FailedPreconditionError(absl::StrCat("no Ceph from the fixture `ceph`: ", file,
                                                      " names ", path, ", which is gone; ", kHow));
  }
  return path;
}

}  // namespace

absl::StatusOr<CephCluster> CephClusterFromFixture() {
  const char* dir = std::getenv(kFixtureDirEnv);
  if (dir == nullptr || *dir == '\0') {
    return absl::FailedPreconditionError(
        absl::StrCat("no Ceph from the fixture `ceph`: ", kFixtureDirEnv, " is not set; ", kHow));
  }
  CephCluster cluster{.fs = "gpuaas"};
  GPUAAS_ASSIGN_OR_RETURN(cluster.conf, PathIn(dir, "conf"));
  GPUAAS_ASSIGN_OR_RETURN(cluster.keyring, PathIn(dir, "keyring"));
  return cluster;
}

void CephTest::SetUp() {
  absl::StatusOr<CephCluster> cluster = CephClusterFromFixture();
  ASSERT_TRUE(cluster.ok()) << cluster.status().message();
  ceph_ = *std::move(cluster);
}

}  // namespace gpuaas::testing
