// CORS for the web console's file browser: a listed origin's preflights are answered and its
// page may read the answers (errors too); any other origin gets no CORS header at all, and a
// server without origins behaves as before.
#include "services/storage/s3/cors.h"

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "services/storage/s3/testing/raw_client.h"
#include "services/storage/s3/testing/test_stack.h"

namespace gpuaas::storage::s3::testing {
namespace {

constexpr std::string_view kConsole = "http://127.0.0.1:8090";
constexpr std::string_view kOtherSite = "https://evil.example";

ServerOptions WithCors() {
  ServerOptions options;
  options.cors_origins = {"http://localhost:8090", std::string(kConsole)};
  return options;
}

class S3CorsTest : public ::testing::Test {
 protected:
  HttpReply Preflight(std::string_view origin, std::string_view method,
                      std::string_view request_headers) {
    RawRequest r;
    r.method = "OPTIONS";
    r.path = "/sto_a/photos/cat.jpg";
    r.headers = {{"Origin", std::string(origin)},
                 {"Access-Control-Request-Method", std::string(method)}};
    if (!request_headers.empty()) {
      r.headers.emplace_back("Access-Control-Request-Headers", std::string(request_headers));
    }
    return Send(stack_.port(), r);
  }
  // A presigned request as the file browser sends it, from a page on `origin`.
  HttpReply Presigned(std::string_view origin, const std::string& method, const std::string& path,
                      const std::string& body = "") {
    RawRequest r;
    r.method = method;
    r.path = path;
    r.body = body;
    r.query = PresignQuery(stack_.port(), method, path, kKeyRw, absl::Now(), absl::Hours(1));
    r.headers = {{"Origin", std::string(origin)}};
    return Send(stack_.port(), r);
  }

  S3TestStack stack_{WithCors()};
};

TEST_F(S3CorsTest, ThePreflightOfAListedOriginIsAnswered) {
  HttpReply reply =
      Preflight(kConsole, "PUT", "Content-Type, x-amz-meta-owner, Authorization, Cookie");
  ASSERT_EQ(reply.status, 200) << reply.body;
  EXPECT_EQ(reply.Header("access-control-allow-origin"), kConsole);
  EXPECT_EQ(reply.Header("access-control-allow-methods"), "GET, HEAD, PUT, POST, DELETE");
  EXPECT_EQ(reply.Header("access-control-allow-headers"), "content-type, x-amz-meta-owner")
      << "only the allowed ones of those requested";
  EXPECT_EQ(reply.Header("access-control-max-age"), "600");
  EXPECT_EQ(reply.Header("vary"), "Origin");
  EXPECT_EQ(reply.Header("access-control-allow-credentials"), "") << "no cookie is ever used";

  reply = Preflight("http://localhost:8090", "DELETE", "");
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(reply.Header("access-control-allow-origin"), "http://localhost:8090");
  EXPECT_EQ(reply.Header("access-control-allow-headers"), "");
}

TEST_F(S3CorsTest, AListedOriginReadsAnswersAndErrors) {
  HttpReply put = Presigned(kConsole, "PUT", "/sto_a/notes.txt", "from the browser");
  ASSERT_EQ(put.status, 200) << put.body;
  EXPECT_EQ(put.Header("access-control-allow-origin"), kConsole);
  EXPECT_TRUE(absl::StrContains(put.Header("access-control-expose-headers"), "ETag"))
      << "CompleteMultipartUpload needs each part's ETag";
  EXPECT_EQ(put.Header("vary"), "Origin");

  HttpReply get = Presigned(kConsole, "GET", "/sto_a/notes.txt");
  EXPECT_EQ(get.body, "from the browser");
  EXPECT_EQ(get.Header("access-control-allow-origin"), kConsole);

  HttpReply missing = Presigned(kConsole, "GET", "/sto_a/missing");
  EXPECT_EQ(missing.ErrorCode(), "NoSuchKey");
  EXPECT_EQ(missing.Header("access-control-allow-origin"), kConsole)
      << "the page shows S3's error, so it must be able to read it";
  EXPECT_EQ(missing.Header("access-control-allow-credentials"), "");
}

// Another site's page with a presigned URL (leaked, or guessed at): the browser sends it, but
// without CORS headers the page can neither send a PUT (its preflight fails) nor read any
// answer. The URL itself still works from curl, as any presigned URL does.
TEST_F(S3CorsTest, AnUnlistedOriginGetsNoCorsHeaders) {
  HttpReply preflight = Preflight(kOtherSite, "PUT", "content-type");
  EXPECT_NE(preflight.status, 200);
  EXPECT_EQ(preflight.Header("access-control-allow-origin"), "");
  EXPECT_EQ(preflight.Header("access-control-allow-methods"), "");

  ASSERT_EQ(Presigned(kConsole, "PUT", "/sto_a/secret.txt", "secret").status, 200);
  HttpReply get = Presigned(kOtherSite, "GET", "/sto_a/secret.txt");
  EXPECT_EQ(get.status, 200) << "the signature is what grants access";
  EXPECT_EQ(get.Header("access-control-allow-origin"), "");
  EXPECT_EQ(get.Header("access-control-expose-headers"), "");
  EXPECT_EQ(get.Header("vary"), "Origin");

  for (std::string_view near_miss : {"http://127.0.0.1:8091", "https://127.0.0.1:8090",
                                     "http://127.0.0.1:8090.evil.example", "null", "*"}) {
    EXPECT_EQ(Preflight(near_miss, "GET", "").Header("access-control-allow-origin"), "")
        << near_miss;
  }
}

TEST(S3CorsOffTest, WithoutOriginsNothingChanges) {
  S3TestStack stack;
  RawRequest r;
  r.method = "OPTIONS";
  r.path = "/sto_a/x";
  r.headers = {{"Origin", std::string(kConsole)}, {"Access-Control-Request-Method", "GET"}};
  HttpReply preflight = Send(stack.port(), r);
  EXPECT_NE(preflight.status, 200);
  EXPECT_EQ(preflight.Header("access-control-allow-origin"), "");
  EXPECT_EQ(preflight.Header("vary"), "");
}

TEST(CorsOriginTest, TakesOnlyWhatBrowsersSendAsOrigin) {
  for (absl::string_view good : {"http://127.0.0.1:8090", "https://console.example.com",
                                 "http://[::1]:8090", "http://localhost"}) {
    EXPECT_TRUE(CheckCorsOrigin(good).ok()) << good;
  }
  for (absl::string_view bad :
       {"*", "null", "", "127.0.0.1:8090", "http://", "http://a/", "http://a/path", "ftp://a",
        "http://Console.example", "http://a:", "http://user@a", " http://a"}) {
    absl::Status status = CheckCorsOrigin(bad);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

}  // namespace
}  // namespace gpuaas::storage::s3::testing
