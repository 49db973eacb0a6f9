// The S3 endpoint over real HTTP on loopback and the real local backend, driven by hand-made
// requests for the edge cases: signatures, clocks, scopes, ranges, conditions, multipart,
// cut connections, quotas and path escapes.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <prometheus/registry.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "services/storage/s3/sigv4.h"
#include "services/storage/s3/testing/raw_client.h"
#include "services/storage/s3/testing/test_stack.h"

namespace gpuaas::storage::s3::testing {
namespace {

using ::gpuaas::common::v1::ROLE_MEMBER;
using ::gpuaas::common::v1::ROLE_VIEWER;

class S3ServerTest : public ::testing::Test {
 protected:
  explicit S3ServerTest(StackBackend backend = StackBackend::kLocal) : stack_({}, backend) {}

  HttpReply Put(const std::string& path, const std::string& body, const TestKey& key = kKeyRw,
                std::vector<std::pair<std::string, std::string>> headers = {}) {
    RawRequest r;
    r.method = "PUT";
    r.path = path;
    r.body = body;
    r.key = key;
    r.headers = std::move(headers);
    return Send(stack_.port(), r);
  }
  HttpReply Do(const std::string& method, const std::string& path, const std::string& query = "",
               const TestKey& key = kKeyRw,
               std::vector<std::pair<std::string, std::string>> headers = {},
               const std::string& body = "") {
    RawRequest r;
    r.method = method;
    r.path = path;
    r.query = query;
    r.key = key;
    r.headers = std::move(headers);
    r.body = body;
    return Send(stack_.port(), r);
  }
  HttpReply Get(const std::string& path, const TestKey& key = kKeyRw) {
    return Do("GET", path, "", key);
  }
  static std::string Between(const std::string& text, const std::string& open,
                             const std::string& close, size_t from = 0) {
    size_t begin = text.find(open, from);
    if (begin == std::string::npos) {
      return "";
    }
    begin += open.size();
    return text.substr(begin, text.find(close, begin) - begin);
  }
  static int Count(const std::string& text, const std::string& needle) {
    int n = 0;
    for (size_t pos = text.find(needle); pos != std::string::npos;
         pos = text.find(needle, pos + 1)) {
      ++n;
    }
    return n;
  }

  S3TestStack stack_;
};

// The tests that matter most for a backend (round trip, cut writes, quota, multipart) run on
// each: the local one and the ceph one on the test cluster.
class S3OnEachBackendTest : public S3ServerTest,
                            public ::testing::WithParamInterface<StackBackend> {
 protected:
  S3OnEachBackendTest() : S3ServerTest(GetParam()) {}
};

std::string BackendTestName(const ::testing::TestParamInfo<StackBackend>& info) {
  return StackBackendName(info.param);
}

INSTANTIATE_TEST_SUITE_P(Backends, S3OnEachBackendTest,
                         ::testing::Values(StackBackend::kLocal, StackBackend::kCeph),
                         BackendTestName);

TEST_P(S3OnEachBackendTest, PutGetHeadDeleteRoundTrip) {
  HttpReply put =
      Put("/sto_a/dir/hello.txt", "hello, world", kKeyRw, {{"content-type", "text/plain"}});
  ASSERT_EQ(put.status, 200) << put.body;
  EXPECT_EQ(put.Header("etag"), "\"e4d7f1b4ed2e42d15898f4b27b019da4\"");  // MD5
  HttpReply get = Get("/sto_a/dir/hello.txt");
  ASSERT_EQ(get.status, 200);
  EXPECT_EQ(get.body, "hello, world");
  EXPECT_EQ(get.Header("content-type"), "text/plain");
  EXPECT_EQ(get.Header("etag"), put.Header("etag"));
  EXPECT_FALSE(get.Header("last-modified").empty());
  EXPECT_FALSE(get.Header("x-amz-request-id").empty());
  HttpReply head = Do("HEAD", "/sto_a/dir/hello.txt");
  EXPECT_EQ(head.status, 200);
  EXPECT_EQ(head.Header("content-length"), "12");
  EXPECT_EQ(Do("DELETE", "/sto_a/dir/hello.txt").status, 204);
  HttpReply gone = Get("/sto_a/dir/hello.txt");
  EXPECT_EQ(gone.status, 404);
  EXPECT_EQ(gone.ErrorCode(), "NoSuchKey");
  EXPECT_TRUE(absl::StrContains(gone.body, "<Resource>/sto_a/dir/hello.txt</Resource>"));
  EXPECT_EQ(Do("HEAD", "/sto_a/dir/hello.txt").status, 404);
  EXPECT_EQ(Do("DELETE", "/sto_a/never-there").status, 204);
  EXPECT_EQ(Get("/sto_a/dir").ErrorCode(), "NoSuchKey") << "a directory is no object";
}

TEST_F(S3ServerTest, PayloadModes) {
  RawRequest unsigned_put;
  unsigned_put.method = "PUT";
  unsigned_put.path = "/sto_a/unsigned";
  unsigned_put.body = "unsigned body";
  unsigned_put.key = kKeyRw;
  unsigned_put.payload_hash = std::string(kUnsignedPayload);
  EXPECT_EQ(Send(stack_.port(), unsigned_put).status, 200);
  EXPECT_EQ(Get("/sto_a/unsigned").body, "unsigned body");

  RawRequest wrong_hash = unsigned_put;
  wrong_hash.path = "/sto_a/wrong-hash";
  wrong_hash.payload_hash = Sha256Hex("something else");
  HttpReply reply = Send(stack_.port(), wrong_hash);
  EXPECT_EQ(reply.status, 400);
  EXPECT_EQ(reply.ErrorCode(), "XAmzContentSHA256Mismatch");
  EXPECT_EQ(Get("/sto_a/wrong-hash").status, 404) << "nothing committed";

  std::string data;
  for (int i = 0; i < 200'000; ++i) {
    data.push_back(static_cast<char>('a' + i % 23));
  }
  RawRequest chunked;
  chunked.method = "PUT";
  chunked.path = "/sto_a/chunked.bin";
  chunked.body = data;
  chunked.key = kKeyRw;
  chunked.chunk_size = 65536;
  reply = Send(stack_.port(), chunked);
  ASSERT_EQ(reply.status, 200) << reply.body;
  EXPECT_EQ(Get("/sto_a/chunked.bin").body, data);

  chunked.path = "/sto_a/chunked-bad.bin";
  chunked.bad_chunk = 2;
  reply = Send(stack_.port(), chunked);
  EXPECT_EQ(reply.status, 403);
  EXPECT_EQ(reply.ErrorCode(), "SignatureDoesNotMatch");
  EXPECT_EQ(Get("/sto_a/chunked-bad.bin").status, 404) << "nothing committed";
  chunked.bad_chunk = 4;  // the final, empty chunk
  EXPECT_EQ(Send(stack_.port(), chunked).ErrorCode(), "SignatureDoesNotMatch");
  EXPECT_EQ(Get("/sto_a/chunked-bad.bin").status, 404);

  // Newer SDKs: unsigned aws-chunked with a CRC-32 trailer, or the checksum as a header.
  RawRequest trailer;
  trailer.method = "PUT";
  trailer.path = "/sto_a/trailer.bin";
  trailer.body = data;
  trailer.key = kKeyRw;
  trailer.chunk_size = 65536;
  trailer.unsigned_trailer = true;
  reply = Send(stack_.port(), trailer);
  ASSERT_EQ(reply.status, 200) << reply.body;
  EXPECT_EQ(Get("/sto_a/trailer.bin").body, data);
  trailer.path = "/sto_a/trailer-bad.bin";
  trailer.trailer_crc32 = "AAAAAA==";
  reply = Send(stack_.port(), trailer);
  EXPECT_EQ(reply.ErrorCode(), "BadDigest") << reply.body;
  EXPECT_EQ(Get("/sto_a/trailer-bad.bin").status, 404);
  EXPECT_EQ(Put("/sto_a/crc", "123456789", kKeyRw, {{"x-amz-checksum-crc32", "y/Q5Jg=="}}).status,
            200);
  EXPECT_EQ(Put("/sto_a/crc-bad", "123456789", kKeyRw, {{"x-amz-checksum-crc32", "AAAAAA=="}})
                .ErrorCode(),
            "BadDigest");

  std::string md5 = absl::Base64Escape(std::string(16, 'x'));
  reply = Put("/sto_a/md5", "content", kKeyRw, {{"content-md5", md5}});
  EXPECT_EQ(reply.ErrorCode(), "BadDigest");
  EXPECT_EQ(Get("/sto_a/md5").status, 404);
  reply = Put("/sto_a/md5", "content", kKeyRw,
              {{"content-md5", "mgNkuembtIDdJeHwKEyFVQ=="}});  // MD5("content")
  EXPECT_EQ(reply.status, 200) << reply.body;
}

TEST_F(S3ServerTest, SignatureFailures) {
  TestKey wrong = kKeyRw;
  wrong.secret = "not-the-secret";
  HttpReply reply = Get("/sto_a/x", wrong);
  EXPECT_EQ(reply.status, 403);
  EXPECT_EQ(reply.ErrorCode(), "SignatureDoesNotMatch");

  reply = Get("/sto_a/x", TestKey{"AKIDUNKNOWN000000000", "s"});
  EXPECT_EQ(reply.status, 403);
  EXPECT_EQ(reply.ErrorCode(), "InvalidAccessKeyId");

  reply = Get("/sto_a/x", kKeyExpired);
  EXPECT_EQ(reply.status, 403);
  EXPECT_EQ(reply.ErrorCode(), "AccessDenied");

  RawRequest skewed;
  skewed.path = "/sto_a/x";
  skewed.key = kKeyRw;
  skewed.time = absl::Now() - absl::Minutes(20);
  reply = Send(stack_.port(), skewed);
  EXPECT_EQ(reply.status, 403);
  EXPECT_EQ(reply.ErrorCode(), "RequestTimeTooSkewed");
  skewed.time = absl::Now() + absl::Minutes(20);
  EXPECT_EQ(Send(stack_.port(), skewed).ErrorCode(), "RequestTimeTooSkewed");

  RawRequest other_region;
  other_region.path = "/sto_a/x";
  other_region.key = kKeyRw;
  other_region.region = "eu-west-1";
  EXPECT_EQ(Send(stack_.port(), other_region).ErrorCode(), "AuthorizationHeaderMalformed");

  RawRequest anonymous;
  anonymous.path = "/sto_a/x";
  EXPECT_EQ(Send(stack_.port(), anonymous).ErrorCode(), "AccessDenied");

  // Revocation applies to the next request.
  ASSERT_EQ(Put("/sto_a/x", "x").status, 200);
  stack_.directory().RevokeKey(kKeyRw.id);
  EXPECT_EQ(Get("/sto_a/x").ErrorCode(), "InvalidAccessKeyId");
}

TEST_F(S3ServerTest, PresignedUrls) {
  ASSERT_EQ(Put("/sto_a/shared%20file.txt", "presigned content").status, 200);
  RawRequest get;
  get.path = "/sto_a/shared%20file.txt";
  get.query = PresignQuery(stack_.port(), "GET", get.path, kKeyRw, absl::Now(), absl::Hours(1));
  HttpReply reply = Send(stack_.port(), get);
  ASSERT_EQ(reply.status, 200) << reply.body;
  EXPECT_EQ(reply.body, "presigned content");

  get.query = PresignQuery(stack_.port(), "GET", get.path, kKeyRw, absl::Now() - absl::Hours(2),
                           absl::Hours(1));
  reply = Send(stack_.port(), get);
  EXPECT_EQ(reply.status, 403);
  EXPECT_EQ(reply.ErrorCode(), "AccessDenied");
  EXPECT_TRUE(absl::StrContains(reply.body, "Request has expired"));

  get.query =
      PresignQuery(stack_.port(), "GET", get.path, kKeyRw, absl::Now(), absl::Hours(24 * 8));
  EXPECT_EQ(Send(stack_.port(), get).ErrorCode(), "AuthorizationQueryParametersError");

  get.query =
      PresignQuery(stack_.port(), "GET", "/sto_a/other", kKeyRw, absl::Now(), absl::Hours(1));
  EXPECT_EQ(Send(stack_.port(), get).ErrorCode(), "SignatureDoesNotMatch");

  RawRequest put;
  put.method = "PUT";
  put.path = "/sto_a/uploaded-by-url";
  put.body = "via url";
  put.query = PresignQuery(stack_.port(), "PUT", put.path, kKeyRw, absl::Now(), absl::Hours(1));
  EXPECT_EQ(Send(stack_.port(), put).status, 200);
  EXPECT_EQ(Get("/sto_a/uploaded-by-url").body, "via url");
}

TEST_F(S3ServerTest, ScopesTenantsAndReadOnlyKeys) {
  ASSERT_EQ(Put("/sto_a/doc", "a's data").status, 200);
  HttpReply reply = Put("/sto_a/doc", "overwrite", kKeyRo);
  EXPECT_EQ(reply.status, 403);
  EXPECT_EQ(reply.ErrorCode(), "AccessDenied");
  EXPECT_EQ(Do("DELETE", "/sto_a/doc", "", kKeyRo).ErrorCode(), "AccessDenied");
  EXPECT_EQ(Get("/sto_a/doc", kKeyRo).body, "a's data");

  // Another tenant's storage and one the key is not scoped to look like no storage at all.
  for (const auto& [key, path] :
       std::vector<std::pair<TestKey, std::string>>{{kKeyRw, "/sto_b/doc"},
                                                    {kKeyB, "/sto_a/doc"},
                                                    {kKeyRw, "/sto_small/doc"},
                                                    {kKeyRw, "/sto_nonexistent/doc"}}) {
    reply = Get(path, key);
    EXPECT_EQ(reply.status, 404) << path;
    EXPECT_EQ(reply.ErrorCode(), "NoSuchBucket") << path;
  }
  EXPECT_EQ(Do("HEAD", "/sto_b", "", kKeyRw).status, 404);
  EXPECT_EQ(Do("HEAD", "/sto_a", "", kKeyRw).status, 200);

  reply = Get("/", kKeyRw);
  ASSERT_EQ(reply.status, 200);
  EXPECT_EQ(Count(reply.body, "<Name>"), 1);
  EXPECT_TRUE(absl::StrContains(reply.body, "<Name>sto_a</Name>"));
}

TEST_F(S3ServerTest, BearerTokens) {
  ASSERT_EQ(Put("/sto_a/doc", "data").status, 200);
  auto bearer = [&](const std::string& method, const std::string& path, std::string token,
                    const std::string& body = "") {
    RawRequest r;
    r.method = method;
    r.path = path;
    r.body = body;
    r.headers = {{"authorization", std::move(token)}};
    return Send(stack_.port(), r);
  };
  std::string member = stack_.BearerToken("ten_a", ROLE_MEMBER);
  std::string viewer = stack_.BearerToken("ten_a", ROLE_VIEWER);
  EXPECT_EQ(bearer("GET", "/sto_a/doc", member).body, "data");
  EXPECT_EQ(bearer("PUT", "/sto_a/by-token", member, "t").status, 200);
  EXPECT_EQ(bearer("GET", "/sto_a/doc", viewer).status, 200);
  EXPECT_EQ(bearer("PUT", "/sto_a/by-viewer", viewer, "t").ErrorCode(), "AccessDenied");
  EXPECT_EQ(bearer("GET", "/sto_b/doc", member).ErrorCode(), "NoSuchBucket");
  EXPECT_EQ(bearer("GET", "/sto_a/doc", "Bearer not.a.token").ErrorCode(), "AccessDenied");
  HttpReply list = bearer("GET", "/", member);
  EXPECT_EQ(Count(list.body, "<Name>"), 2) << list.body;  // sto_a and sto_small
}

TEST_F(S3ServerTest, RangesAndConditions) {
  HttpReply put = Put("/sto_a/digits", "0123456789");
  std::string etag = put.Header("etag");
  auto ranged = [&](const std::string& range) {
    return Do("GET", "/sto_a/digits", "", kKeyRw, {{"range", range}});
  };
  HttpReply reply = ranged("bytes=2-5");
  EXPECT_EQ(reply.status, 206);
  EXPECT_EQ(reply.body, "2345");
  EXPECT_EQ(reply.Header("content-range"), "bytes 2-5/10");
  EXPECT_EQ(ranged("bytes=-3").body, "789");
  EXPECT_EQ(ranged("bytes=7-").body, "789");
  EXPECT_EQ(ranged("bytes=8-100").body, "89");
  reply = ranged("bytes=10-");
  EXPECT_EQ(reply.status, 416);
  EXPECT_EQ(reply.ErrorCode(), "InvalidRange");
  EXPECT_EQ(reply.Header("content-range"), "bytes */10");
  EXPECT_EQ(ranged("bytes=0-1,4-5").status, 200) << "several ranges: the whole object";

  auto conditional = [&](const std::string& name, const std::string& value) {
    return Do("GET", "/sto_a/digits", "", kKeyRw, {{name, value}});
  };
  EXPECT_EQ(conditional("if-none-match", etag).status, 304);
  EXPECT_EQ(conditional("if-none-match", "\"other\"").status, 200);
  EXPECT_EQ(conditional("if-match", etag).status, 200);
  reply = conditional("if-match", "\"other\"");
  EXPECT_EQ(reply.status, 412);
  EXPECT_EQ(reply.ErrorCode(), "PreconditionFailed");
  EXPECT_EQ(conditional("if-modified-since", "Fri, 01 Jan 2100 00:00:00 GMT").status, 304);
  EXPECT_EQ(conditional("if-modified-since", "Sat, 01 Jan 2000 00:00:00 GMT").status, 200);
  EXPECT_EQ(conditional("if-unmodified-since", "Sat, 01 Jan 2000 00:00:00 GMT").status, 412);
}

TEST_P(S3OnEachBackendTest, ListObjectsPagesAndPrefixes) {
  for (int i = 0; i < 25; ++i) {
    ASSERT_EQ(Put(absl::StrCat("/sto_a/logs/", 100 + i, ".txt"), "x").status, 200);
  }
  ASSERT_EQ(Put("/sto_a/top.txt", "x").status, 200);
  ASSERT_EQ(Put("/sto_a/with%20space%2Bplus.txt", "x").status, 200);

  std::vector<std::string> keys;
  std::string token;
  int pages = 0;
  do {
    std::string query = "list-type=2&max-keys=10&prefix=logs%2F";
    if (!token.empty()) {
      query += "&continuation-token=" + UriEncode(token, true);
    }
    HttpReply reply = Do("GET", "/sto_a", query);
    ASSERT_EQ(reply.status, 200) << reply.body;
    for (size_t pos = reply.body.find("<Key>"); pos != std::string::npos;
         pos = reply.body.find("<Key>", pos + 1)) {
      keys.push_back(Between(reply.body, "<Key>", "</Key>", pos));
    }
    token = Between(reply.body, "<NextContinuationToken>", "</NextContinuationToken>");
    ++pages;
  } while (!token.empty() && pages < 10);
  EXPECT_EQ(pages, 3);
  ASSERT_EQ(keys.size(), 25u);
  EXPECT_EQ(keys.front(), "logs/100.txt");
  EXPECT_EQ(keys.back(), "logs/124.txt");

  HttpReply top = Do("GET", "/sto_a", "list-type=2&delimiter=%2F&encoding-type=url");
  EXPECT_TRUE(absl::StrContains(top.body, "<Prefix>logs%2F</Prefix>") ||
              absl::StrContains(top.body, "<Prefix>logs/</Prefix>"))
      << top.body;
  EXPECT_TRUE(absl::StrContains(top.body, "<Key>with%20space%2Bplus.txt</Key>")) << top.body;
  EXPECT_EQ(Count(top.body, "<Contents>"), 2);

  HttpReply v1 = Do("GET", "/sto_a", "prefix=logs%2F&max-keys=20");
  EXPECT_EQ(Count(v1.body, "<Contents>"), 20);
  EXPECT_TRUE(absl::StrContains(v1.body, "<IsTruncated>true</IsTruncated>"));
  EXPECT_EQ(Between(v1.body, "<NextMarker>", "</NextMarker>"), "logs/119.txt");
  HttpReply v1_next = Do("GET", "/sto_a", "prefix=logs%2F&marker=logs%2F119.txt");
  EXPECT_EQ(Count(v1_next.body, "<Contents>"), 5);

  EXPECT_EQ(Do("GET", "/sto_a", "list-type=2&continuation-token=%25%25").ErrorCode(),
            "InvalidArgument");
  EXPECT_EQ(Do("GET", "/sto_a", "location").status, 200);
  EXPECT_EQ(Do("GET", "/sto_a", "acl").ErrorCode(), "NotImplemented");
  EXPECT_EQ(Do("PUT", "/sto_a").ErrorCode(), "BucketAlreadyOwnedByYou");
}

TEST_F(S3ServerTest, DeleteObjectsAndCopy) {
  for (const char* key : {"a", "b", "c"}) {
    ASSERT_EQ(Put(absl::StrCat("/sto_a/", key), key).status, 200);
  }
  std::string body =
      "<Delete><Object><Key>a</Key></Object><Object><Key>b</Key></Object>"
      "<Object><Key>missing</Key></Object><Object><Key>../up</Key></Object></Delete>";
  HttpReply reply = Do("POST", "/sto_a", "delete", kKeyRw, {}, body);
  ASSERT_EQ(reply.status, 200) << reply.body;
  EXPECT_EQ(Count(reply.body, "<Deleted>"), 3);
  EXPECT_EQ(Count(reply.body, "<Error>"), 1);
  EXPECT_EQ(Get("/sto_a/a").status, 404);
  EXPECT_EQ(Get("/sto_a/c").body, "c");
  reply = Do("POST", "/sto_a", "delete", kKeyRw, {},
             "<Delete><Quiet>true</Quiet><Object><Key>c</Key></Object></Delete>");
  EXPECT_EQ(Count(reply.body, "<Deleted>"), 0);
  EXPECT_EQ(Do("POST", "/sto_a", "delete", kKeyRw, {}, "<Delete><Object>").ErrorCode(),
            "MalformedXML");
  EXPECT_EQ(Do("POST", "/sto_a", "delete", kKeyRo, {}, body).ErrorCode(), "AccessDenied");

  ASSERT_EQ(Put("/sto_a/src.txt", "copy me").status, 200);
  reply = Do("PUT", "/sto_a/dst/copy.txt", "", kKeyRw, {{"x-amz-copy-source", "/sto_a/src.txt"}});
  ASSERT_EQ(reply.status, 200) << reply.body;
  EXPECT_TRUE(absl::StrContains(reply.body, "<CopyObjectResult"));
  EXPECT_EQ(Get("/sto_a/dst/copy.txt").body, "copy me");
  EXPECT_EQ(Do("PUT", "/sto_a/x", "", kKeyRw, {{"x-amz-copy-source", "sto_b/src.txt"}}).ErrorCode(),
            "AccessDenied");
  EXPECT_EQ(Do("PUT", "/sto_a/x", "", kKeyRw, {{"x-amz-copy-source", "sto_a/nope"}}).ErrorCode(),
            "NoSuchKey");
}

// Uploads `parts` to a new upload of `key`; returns the upload id and the parts' ETags.
class MultipartTest : public S3ServerTest, public ::testing::WithParamInterface<StackBackend> {
 protected:
  MultipartTest() : S3ServerTest(GetParam()) {}

  std::string Create(const std::string& key) {
    HttpReply reply = Do("POST", "/sto_a/" + key, "uploads");
    EXPECT_EQ(reply.status, 200) << reply.body;
    return Between(reply.body, "<UploadId>", "</UploadId>");
  }
  HttpReply Part(const std::string& key, const std::string& id, int number,
                 const std::string& data) {
    RawRequest r;
    r.method = "PUT";
    r.path = "/sto_a/" + key;
    r.query = absl::StrCat("partNumber=", number, "&uploadId=", UriEncode(id, true));
    r.body = data;
    r.key = kKeyRw;
    return Send(stack_.port(), r);
  }
  HttpReply Complete(const std::string& key, const std::string& id,
                     const std::vector<std::pair<int, std::string>>& parts) {
    std::string body = "<CompleteMultipartUpload>";
    for (const auto& [number, etag] : parts) {
      absl::StrAppend(&body, "<Part><PartNumber>", number, "</PartNumber><ETag>", etag,
                      "</ETag></Part>");
    }
    body += "</CompleteMultipartUpload>";
    return Do("POST", "/sto_a/" + key, "uploadId=" + UriEncode(id, true), kKeyRw, {}, body);
  }
};

INSTANTIATE_TEST_SUITE_P(Backends, MultipartTest,
                         ::testing::Values(StackBackend::kLocal, StackBackend::kCeph),
                         BackendTestName);

TEST_P(MultipartTest, CutAt60PercentThenResumedWithThePartsKept) {
  const size_t kPart = 5 << 20;
  std::vector<std::string> data;
  for (int i = 0; i < 5; ++i) {
    data.push_back(std::string(i == 4 ? 1234 : kPart, static_cast<char>('A' + i)));
  }
  std::string id = Create("big.bin");
  ASSERT_FALSE(id.empty());
  std::vector<std::pair<int, std::string>> etags;
  for (int i = 0; i < 3; ++i) {
    HttpReply reply = Part("big.bin", id, i + 1, data[i]);
    ASSERT_EQ(reply.status, 200) << reply.body;
    etags.emplace_back(i + 1, reply.Header("etag"));
  }
  // Part 4 is cut off halfway: the connection drops.
  RawRequest cut;
  cut.method = "PUT";
  cut.path = "/sto_a/big.bin";
  cut.query = absl::StrCat("partNumber=4&uploadId=", UriEncode(id, true));
  cut.body = data[3];
  cut.key = kKeyRw;
  cut.cut_after = 1000 + kPart / 2;
  Send(stack_.port(), cut);

  // Resuming: the three finished parts are still there.
  HttpReply listed = Do("GET", "/sto_a/big.bin", "uploadId=" + UriEncode(id, true));
  ASSERT_EQ(listed.status, 200) << listed.body;
  EXPECT_EQ(Count(listed.body, "<Part>"), 3) << listed.body;
  HttpReply uploads = Do("GET", "/sto_a", "uploads");
  EXPECT_TRUE(absl::StrContains(uploads.body, id));
  for (int i = 3; i < 5; ++i) {
    HttpReply reply = Part("big.bin", id, i + 1, data[i]);
    ASSERT_EQ(reply.status, 200) << reply.body;
    etags.emplace_back(i + 1, reply.Header("etag"));
  }
  std::vector<std::pair<int, std::string>> reversed = {etags[1], etags[0]};
  EXPECT_EQ(Complete("big.bin", id, reversed).ErrorCode(), "InvalidPartOrder");
  EXPECT_EQ(Complete("big.bin", id, {{1, "\"0000\""}}).ErrorCode(), "InvalidPart");
  HttpReply done = Complete("big.bin", id, etags);
  ASSERT_EQ(done.status, 200) << done.body;
  EXPECT_TRUE(absl::StrContains(done.body, "-5&quot;</ETag>")) << done.body;
  HttpReply get = Get("/sto_a/big.bin");
  ASSERT_EQ(get.status, 200);
  std::string expected;
  for (const auto& d : data) {
    expected += d;
  }
  EXPECT_TRUE(get.body == expected) << "sizes " << get.body.size() << " vs " << expected.size();
  EXPECT_EQ(Do("GET", "/sto_a/big.bin", "uploadId=" + UriEncode(id, true)).ErrorCode(),
            "NoSuchUpload");
}

TEST_P(MultipartTest, AbortAndSmallParts) {
  std::string id = Create("aborted");
  ASSERT_EQ(Part("aborted", id, 1, "tiny").status, 200);
  HttpReply second = Part("aborted", id, 2, "tiny too");
  HttpReply first_again = Part("aborted", id, 1, "tiny");
  EXPECT_EQ(Complete("aborted", id, {{1, first_again.Header("etag")}, {2, second.Header("etag")}})
                .ErrorCode(),
            "EntityTooSmall");
  EXPECT_EQ(Do("DELETE", "/sto_a/other-key", "uploadId=" + UriEncode(id, true)).ErrorCode(),
            "NoSuchUpload");
  EXPECT_EQ(Do("DELETE", "/sto_a/aborted", "uploadId=" + UriEncode(id, true)).status, 204);
  EXPECT_EQ(Part("aborted", id, 3, "late").ErrorCode(), "NoSuchUpload");
  EXPECT_EQ(Do("DELETE", "/sto_a/aborted", "uploadId=" + UriEncode(id, true)).ErrorCode(),
            "NoSuchUpload");
  EXPECT_EQ(Part("aborted", "no-such-upload", 1, "x").ErrorCode(), "NoSuchUpload");
  EXPECT_EQ(Part("aborted", id, 10001, "x").ErrorCode(), "InvalidArgument");
}

TEST_P(S3OnEachBackendTest, CutPutLeavesThePreviousObjectIntact) {
  ASSERT_EQ(Put("/sto_a/precious", std::string(100'000, 'v')).status, 200);
  RawRequest cut;
  cut.method = "PUT";
  cut.path = "/sto_a/precious";
  cut.body = std::string(3'000'000, 'w');
  cut.key = kKeyRw;
  cut.cut_after = 1'500'000;
  Send(stack_.port(), cut);
  HttpReply get = Get("/sto_a/precious");
  EXPECT_EQ(get.status, 200);
  EXPECT_TRUE(get.body == std::string(100'000, 'v'));
  // And the connection's thread is free again: the server still answers.
  EXPECT_EQ(Get("/sto_a/precious").status, 200);
}

TEST_P(S3OnEachBackendTest, QuotaExceededKeepsWhatIsStored) {
  ASSERT_EQ(Put("/sto_small/keep", std::string(40'000, 'k'), kKeySmall).status, 200);
  HttpReply reply = Put("/sto_small/big", std::string(100'000, 'b'), kKeySmall);
  EXPECT_EQ(reply.status, 403);
  EXPECT_EQ(reply.ErrorCode(), "QuotaExceeded");
  reply = Put("/sto_small/keep", std::string(70'000, 'n'), kKeySmall);
  EXPECT_EQ(reply.ErrorCode(), "QuotaExceeded");
  EXPECT_TRUE(Get("/sto_small/keep", kKeySmall).body == std::string(40'000, 'k'));
  EXPECT_EQ(Get("/sto_small/big", kKeySmall).status, 404);
}

TEST_F(S3ServerTest, PathsNeverLeaveTheStorage) {
  std::filesystem::path outside = stack_.data_root().parent_path() / "outside.txt";
  { std::ofstream(outside) << "secret outside"; }
  for (const std::string path : {"/sto_a/%2e%2e/%2e%2e/outside.txt", "/sto_a/../../outside.txt",
                                 "/sto_a/a/%2E%2E/%2E%2E/%2E%2E/outside.txt", "/sto_a//abs",
                                 "/sto_a/a//b", "/sto_a/./x", "/sto_a/x%00y"}) {
    HttpReply put = Put(path, "escape");
    EXPECT_EQ(put.status / 100, 4) << path << " " << put.body;
    EXPECT_EQ(Get(path).status / 100, 4) << path;
  }
  std::ifstream in(outside);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, "secret outside");
  EXPECT_FALSE(std::filesystem::exists(stack_.data_root().parent_path() / "escape"));

  // A symlink planted inside the storage (by a workload) that points outside.
  std::filesystem::path volume = stack_.VolumePath(kBucketA);
  std::filesystem::create_symlink(outside, volume / "link.txt");
  std::filesystem::create_directory_symlink(stack_.data_root().parent_path(), volume / "dirlink");
  EXPECT_EQ(Get("/sto_a/link.txt").status / 100, 4);
  EXPECT_EQ(Get("/sto_a/dirlink/outside.txt").status / 100, 4);
  EXPECT_EQ(Put("/sto_a/dirlink/planted.txt", "x").status / 100, 4);
  EXPECT_FALSE(std::filesystem::exists(stack_.data_root().parent_path() / "planted.txt"));
  std::ifstream again(outside);
  std::string after((std::istreambuf_iterator<char>(again)), std::istreambuf_iterator<char>());
  EXPECT_EQ(after, "secret outside");
}

// One keep-alive connection, written in full, read until the server closes it (or 20 s pass).
std::string Converse(int port, const std::string& bytes) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval timeout{20, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  for (size_t sent = 0; sent < bytes.size();) {
    ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) {
      break;
    }
    sent += static_cast<size_t>(n);
  }
  std::string received;
  char buffer[4096];
  for (ssize_t n; (n = ::recv(fd, buffer, sizeof(buffer), 0)) > 0;) {
    received.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return received;
}

TEST_F(S3ServerTest, AnErrorBeforeTheBodyClosesTheConnection) {
  // An anonymous PUT is refused before its body is read; the body must not be taken for the
  // next request on the connection (it would be answered as one).
  std::string body = "GET /sto_a/x HTTP/1.1\r\nHost: h\r\n\r\n" + std::string(200'000, 'x');
  std::string received =
      Converse(stack_.port(), absl::StrCat("PUT /sto_a/k HTTP/1.1\r\nHost: 127.0.0.1\r\n",
                                           "Content-Length: ", body.size(), "\r\n\r\n", body));
  EXPECT_EQ(Count(received, "HTTP/1.1 "), 1) << received.substr(0, 2000);
  EXPECT_TRUE(absl::StrContains(received, "HTTP/1.1 403")) << received.substr(0, 500);
  EXPECT_TRUE(absl::StrContains(received, "Connection: close")) << received.substr(0, 500);
}

TEST_F(S3ServerTest, ContinuesForAnyCaseOf100Continue) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(stack_.port()));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval timeout{20, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  std::string head =
      "PUT /sto_a/k HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n"
      "Expect: 100-Continue\r\n\r\n";
  ASSERT_EQ(::send(fd, head.data(), head.size(), MSG_NOSIGNAL), static_cast<ssize_t>(head.size()));
  // Go's SDK waits for this before sending the body.
  char buffer[256];
  ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
  ::close(fd);
  ASSERT_GT(n, 0);
  EXPECT_TRUE(absl::StartsWith(std::string(buffer, n), "HTTP/1.1 100 Continue"))
      << std::string(buffer, n);
}

TEST_F(S3ServerTest, UnknownOperationsAndMethods) {
  EXPECT_EQ(Do("GET", "/sto_a/x", "tagging").ErrorCode(), "NotImplemented");
  EXPECT_EQ(Do("DELETE", "/sto_a").ErrorCode(), "NotImplemented");
  EXPECT_EQ(Do("PATCH", "/sto_a/x").status, 405);
}

// A connection that sent `bytes` and waits; the caller closes it.
int SentAndWaiting(int port, const std::string& bytes) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval timeout{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  EXPECT_EQ(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(bytes.size()));
  return fd;
}

// What the server sends until it closes the connection (or 10 s pass: then "(open)").
std::string UntilClosed(int fd) {
  std::string received;
  char buffer[4096];
  ssize_t n;
  while ((n = ::recv(fd, buffer, sizeof(buffer), 0)) > 0) {
    received.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return n < 0 && errno == EAGAIN ? received + "(open)" : received;
}

TEST(S3ConnectionLimitsTest, CapsPerClientAndTimesOutHeadsAndBodies) {
  ServerOptions options;
  options.threads = 1;
  options.limits = {.max_connections_per_client = 2,
                    .header_timeout = absl::Seconds(1),
                    .body_idle_timeout = absl::Seconds(1)};
  S3TestStack stack(options);
  // Two half-sent heads hold no worker (there is one) and the address's two places.
  // (Blank lines before a request line do not end its head.)
  int first = SentAndWaiting(stack.port(), "\r\n\r\nGET /sto_a/x HTTP/1.1\r\nHo");
  int second = SentAndWaiting(stack.port(), "GET /sto_a/x HTTP/1.1\r\nHo");
  std::string third = UntilClosed(SentAndWaiting(stack.port(), "GET / HTTP/1.1\r\n\r\n"));
  EXPECT_TRUE(absl::StartsWith(third, "HTTP/1.1 503")) << third;
  EXPECT_TRUE(absl::StrContains(third, "<Code>SlowDown</Code>")) << third;
  // The header timeout closes both without an answer; then the address may connect again.
  EXPECT_EQ(UntilClosed(first), "");
  EXPECT_EQ(UntilClosed(second), "");
  RawRequest put;
  put.method = "PUT";
  put.path = "/sto_a/limits";
  put.body = "body";
  put.key = kKeyRw;
  EXPECT_EQ(Send(stack.port(), put).status, 200);

  // A body that stops half-way loses its connection after the idle timeout.
  const std::string url = absl::StrCat(
      "/sto_a/cut?",
      PresignQuery(stack.port(), "PUT", "/sto_a/cut", kKeyRw, absl::Now(), absl::Minutes(5)));
  const absl::Time sent = absl::Now();
  std::string cut = UntilClosed(SentAndWaiting(
      stack.port(), absl::StrCat("PUT ", url, " HTTP/1.1\r\nHost: 127.0.0.1:", stack.port(),
                                 "\r\nContent-Length: 10\r\n\r\nabc")));
  EXPECT_FALSE(absl::EndsWith(cut, "(open)")) << cut;
  EXPECT_GE(absl::Now() - sent, absl::Seconds(1)) << "closed before the body paused: " << cut;
  put.path = "/sto_a/cut";
  put.method = "GET";
  put.body.clear();
  EXPECT_EQ(Send(stack.port(), put).status, 404) << "a cut upload was stored";

  // Two pipelined requests on one connection are both answered (the second's head was read
  // with the first's and goes back through the gate).
  std::string both = UntilClosed(
      SentAndWaiting(stack.port(),
                     "GET /sto_a/a HTTP/1.1\r\nHost: h\r\n\r\nGET /sto_a/b HTTP/1.1\r\nHost: h\r\n"
                     "Connection: close\r\n\r\n"));
  size_t answers = 0;
  for (size_t at = both.find("HTTP/1.1 403"); at != std::string::npos;
       at = both.find("HTTP/1.1 403", at + 1)) {
    ++answers;
  }
  EXPECT_EQ(answers, 2u) << both;
}

TEST(S3MetricsTest, CountsRequestsAndBytes) {
  prometheus::Registry registry;
  ServerOptions options;
  options.metrics_registry = &registry;
  S3TestStack stack(options);
  RawRequest put;
  put.method = "PUT";
  put.path = "/sto_a/m";
  put.body = "12345";
  put.key = kKeyRw;
  ASSERT_EQ(Send(stack.port(), put).status, 200);
  RawRequest get;
  get.path = "/sto_a/m";
  get.key = kKeyRw;
  ASSERT_EQ(Send(stack.port(), get).body, "12345");
  get.path = "/sto_a/missing";
  ASSERT_EQ(Send(stack.port(), get).status, 404);

  auto value = [&](const std::string& family, const std::map<std::string, std::string>& labels) {
    for (const auto& f : registry.Collect()) {
      if (f.name != family) {
        continue;
      }
      for (const auto& metric : f.metric) {
        std::map<std::string, std::string> have;
        for (const auto& label : metric.label) {
          have[label.name] = label.value;
        }
        if (have == labels) {
          return metric.counter.value;
        }
      }
    }
    return -1.0;
  };
  EXPECT_EQ(value("gpuaas_s3_requests_total", {{"operation", "PutObject"}, {"code", "200"}}), 1);
  EXPECT_EQ(value("gpuaas_s3_requests_total", {{"operation", "GetObject"}, {"code", "404"}}), 1);
  EXPECT_EQ(value("gpuaas_s3_bytes_total", {{"direction", "in"}}), 5);
  EXPECT_GE(value("gpuaas_s3_bytes_total", {{"direction", "out"}}), 5);
}

}  // namespace
}  // namespace gpuaas::storage::s3::testing
