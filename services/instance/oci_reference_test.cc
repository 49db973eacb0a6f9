#include "services/instance/oci_reference.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "libs/testing/status_matchers.h"

namespace gpuaas::instance {
namespace {

using gpuaas::testing::StatusIs;

const std::string kDigest = "sha256:" + std::string(64, 'a');

TEST(OciReferenceTest, ReadsHostRepositoryTagAndDigest) {
  absl::StatusOr<OciReference> r = ParseOciReference("f", "127.0.0.1:5000/gpuaas/tiny:1.0");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->host, "127.0.0.1:5000");
  EXPECT_EQ(r->repository, "gpuaas/tiny");
  EXPECT_EQ(r->tag, "1.0");
  EXPECT_EQ(r->PinnedTo(kDigest), "127.0.0.1:5000/gpuaas/tiny@" + kDigest);

  r = ParseOciReference("f", "ghcr.io/org/webui@" + kDigest);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->digest, kDigest);
  EXPECT_EQ(r->ToString(), "ghcr.io/org/webui@" + kDigest);
}

TEST(OciReferenceTest, NamesWithoutAHostAreDockerHubs) {
  absl::StatusOr<OciReference> r = ParseOciReference("f", "debian");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->ToString(), "docker.io/library/debian:latest");
  r = ParseOciReference("f", "localhost:5000/x");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->host, "localhost:5000");
}

TEST(OciReferenceTest, RefusesWhatIsNoReference) {
  for (const std::string& bad : std::vector<std::string>{
           "", "UPPER/case:1", "a b", "host.io/repo@sha256:abc", "host.io/-repo", "repo:ta g",
           "host.io//x", "x:" + std::string(129, 't'), "--tls-verify=false"}) {
    EXPECT_THAT(ParseOciReference("image.oci_reference", bad),
                StatusIs(absl::StatusCode::kInvalidArgument))
        << bad;
  }
}

// Found by tests/fuzz (oci_reference): a reference that fits 1024 bytes as written but not once
// spelled out (docker.io/library/..., :latest) or pinned (@sha256:<digest>) was taken, and
// what the service stores then failed to parse again.
TEST(OciReferenceTest, WhatIsTakenParsesAgainOncePinned) {
  EXPECT_THAT(ParseOciReference("f", std::string(1020, 'a')),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ParseOciReference("f", "h.io/" + std::string(1010, 'a') + ":1"),
              StatusIs(absl::StatusCode::kInvalidArgument));
  // The longest that fits: host, '/', repository, '@', the digest.
  const std::string longest = "h.io/" + std::string(1024 - 5 - 1 - kDigest.size(), 'a');
  absl::StatusOr<OciReference> r = ParseOciReference("f", longest + ":1");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->PinnedTo(kDigest).size(), 1024u);
  EXPECT_TRUE(ParseOciReference("f", r->PinnedTo(kDigest)).ok());
  EXPECT_TRUE(ParseOciReference("f", r->ToString()).ok());
}

TEST(OciReferenceTest, LoopbackRegistries) {
  EXPECT_TRUE(IsLoopbackRegistry("127.0.0.1:5000"));
  EXPECT_TRUE(IsLoopbackRegistry("localhost:5000"));
  EXPECT_TRUE(IsLoopbackRegistry("[::1]:5000"));
  EXPECT_FALSE(IsLoopbackRegistry("127.example.com:5000"));
  EXPECT_FALSE(IsLoopbackRegistry("ghcr.io"));
}

}  // namespace
}  // namespace gpuaas::instance
