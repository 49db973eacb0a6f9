// Attacks on the storage service's S3 endpoint, run against the real gpuaas-storage binary the
// way an outsider would: a leaked presigned URL or key with headers added that were never
// signed, object keys that climb out of the bucket, and a crowd of clients that connect, send
// half a request head and stall. Each asserts the attack fails and the legitimate request next
// to it still works. The attacks on what a storage holds (keys, copies, stored headers) run with
// the storages on the local backend and on Ceph (the ctest fixture `ceph`'s cluster); those on
// the endpoint itself (CORS, slow clients) do not depend on the backend and run on local only.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "libs/testing/ci_skip.h"
#include "libs/testing/pg_test.h"
#include "libs/testing/temp_dir.h"
#include "services/storage/s3/testing/client_tools.h"
#include "services/storage/s3/testing/raw_client.h"
#include "tests/platform/platform_stack.h"

namespace gpuaas::platform_testing {
namespace {

namespace fs = std::filesystem;
using storage::s3::testing::HttpReply;
using storage::s3::testing::PresignQuery;
using storage::s3::testing::RawRequest;
using storage::s3::testing::Send;
using storage::s3::testing::TestKey;

// Short, so the stalled clients' disconnection is seen within the test.
constexpr int kHeaderTimeoutSeconds = 5;
// Short and fast, so trickled bodies are cut within the test (loopback uploads are far faster).
constexpr int kBodyRateGraceSeconds = 2;
constexpr int kBodyMinRate = 1000;
// The web console's origin, the one page allowed to read S3's answers from a browser.
constexpr char kConsoleOrigin[] = "http://127.0.0.1:8090";

class S3AttackTest : public gpuaas::testing::PgTest {
 protected:
  explicit S3AttackTest(StorageBackend backend = StorageBackend::kLocal) : backend_(backend) {}

  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped()) return;
    PlatformOptions options;
    options.agents = {};
    options.storage_flags = {absl::StrCat("--s3-header-timeout=", kHeaderTimeoutSeconds, "s"),
                             absl::StrCat("--s3-body-rate-grace=", kBodyRateGraceSeconds, "s"),
                             absl::StrCat("--s3-body-min-rate=", kBodyMinRate),
                             absl::StrCat("--s3-cors-origins=", kConsoleOrigin)};
    options.storage_backend = backend_;
    stack_ = std::make_unique<PlatformStack>(dsn(), dir_.path(), options);
    const std::string endpoint = stack_->s3_endpoint();
    port_ = std::stoi(endpoint.substr(endpoint.rfind(':') + 1));
    token_ = stack_->CreateTenant("alpha");
    stack_->CreateStorage(token_, "alpha-data");
    key_ = Accessor(token_, "alpha-data");
    other_token_ = stack_->CreateTenant("beta");
    stack_->CreateStorage(other_token_, "beta-data");
    other_key_ = Accessor(other_token_, "beta-data");
  }
  void TearDown() override {
    stack_.reset();
    PgTest::TearDown();
  }

  TestKey Accessor(const std::string& token, const std::string& storage_id) {
    storagepb::CreateAccessorRequest req;
    req.set_storage_id(storage_id);
    req.set_description("tests/security");
    storagepb::CreateAccessorResponse accessor;
    grpc::Status s =
        stack_->storage_stub().CreateAccessor(PlatformStack::Ctx(token).get(), req, &accessor);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return TestKey{accessor.access_key_id(), accessor.secret_access_key()};
  }

  HttpReply Put(const std::string& path, const std::string& body, const TestKey& key) {
    RawRequest r;
    r.method = "PUT";
    r.path = path;
    r.body = body;
    r.key = key;
    return Send(port_, r);
  }
  HttpReply Get(const std::string& path, const TestKey& key) {
    RawRequest r;
    r.path = path;
    r.key = key;
    return Send(port_, r);
  }
  // A presigned PUT of `path` sent with `unsigned_headers` added by whoever holds the URL.
  HttpReply PresignedPut(const std::string& path, const std::string& body,
                         std::vector<std::pair<std::string, std::string>> unsigned_headers = {}) {
    RawRequest r;
    r.method = "PUT";
    r.path = path;
    r.query = PresignQuery(port_, "PUT", path, key_, absl::Now(), absl::Minutes(10));
    r.body = body;
    r.unsigned_headers = std::move(unsigned_headers);
    return Send(port_, r);
  }

  // Every file named `name` the stack keeps on this host: under its directory, and on ceph in
  // both tenants' subvolumes and the levels above them (not all of the file system: other
  // tests' volumes share it and change under a walk).
  std::vector<fs::path> FilesNamed(const std::string& name) {
    std::vector<fs::path> found;
    const fs::path ceph_mount = dir_.path() / "storage-data" / "ceph-mount";
    const auto walk = [&](const fs::path& top) {
      auto it = fs::recursive_directory_iterator(top);
      for (; it != fs::recursive_directory_iterator(); ++it) {
        if (it->path() == ceph_mount) it.disable_recursion_pending();
        if (it->path().filename() == name) found.push_back(it->path());
      }
    };
    walk(dir_.path());
    if (backend_ == StorageBackend::kLocal) return found;
    for (const auto& [token, storage_id] :
         {std::pair{token_, "alpha-data"}, std::pair{other_token_, "beta-data"}}) {
      // <mount>/volumes/_nogroup/<uid>/<uuid>/data
      const fs::path data = stack_->StorageDataPath(StorageUid(token, storage_id));
      EXPECT_FALSE(data.empty()) << storage_id << " has no subvolume";
      if (!data.empty()) walk(data.parent_path().parent_path());
    }
    for (const fs::path& level :
         {ceph_mount, ceph_mount / "volumes", ceph_mount / "volumes" / "_nogroup"}) {
      if (fs::exists(level / name)) found.push_back(level / name);
    }
    return found;
  }
  std::string StorageUid(const std::string& token, const std::string& storage_id) {
    storagepb::GetStorageRequest req;
    req.set_storage_id(storage_id);
    storagepb::Storage storage;
    grpc::Status s =
        stack_->storage_stub().GetStorage(PlatformStack::Ctx(token).get(), req, &storage);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return storage.storage_uid();
  }

  const StorageBackend backend_;
  gpuaas::testing::TempDir dir_;
  std::unique_ptr<PlatformStack> stack_;
  int port_ = 0;
  std::string token_;
  std::string other_token_;
  TestKey key_;
  TestKey other_key_;
};

// The attacks on what a storage holds, on each backend.
class S3StorageAttackTest : public S3AttackTest,
                            public ::testing::WithParamInterface<StorageBackend> {
 protected:
  S3StorageAttackTest() : S3AttackTest(GetParam()) {}
};

INSTANTIATE_TEST_SUITE_P(Backends, S3StorageAttackTest,
                         ::testing::Values(StorageBackend::kLocal, StorageBackend::kCeph),
                         [](const auto& info) { return StorageBackendName(info.param); });

TEST_P(S3StorageAttackTest, PresignedPutWithUnsignedCopySourceDoesNotCopy) {
  ASSERT_EQ(Put("/alpha-data/secret.txt", "the secret", key_).status, 200);

  HttpReply attack =
      PresignedPut("/alpha-data/upload.txt", "", {{"x-amz-copy-source", "/alpha-data/secret.txt"}});
  EXPECT_EQ(attack.status, 403) << attack.body;
  EXPECT_EQ(attack.ErrorCode(), "AccessDenied");
  EXPECT_NE(attack.body.find("x-amz-copy-source"), std::string::npos) << attack.body;
  EXPECT_EQ(Get("/alpha-data/upload.txt", key_).status, 404) << "the copy happened";
  EXPECT_EQ(Get("/alpha-data/secret.txt", key_).body, "the secret");

  // The URL used as meant still uploads, and a presigned GET reads it back.
  ASSERT_EQ(PresignedPut("/alpha-data/upload.txt", "uploaded").status, 200);
  RawRequest get;
  get.path = "/alpha-data/upload.txt";
  get.query = PresignQuery(port_, "GET", get.path, key_, absl::Now(), absl::Minutes(10));
  HttpReply got = Send(port_, get);
  EXPECT_EQ(got.status, 200);
  EXPECT_EQ(got.body, "uploaded");
}

TEST_P(S3StorageAttackTest, PresignedPutWithUnsignedMetadataOrContentMd5IsRefused) {
  for (const auto& header : std::vector<std::pair<std::string, std::string>>{
           {"x-amz-meta-owner", "mallory"},
           {"Content-MD5", "XrY7u+Ae7tCTyyK7j1rNww=="},  // MD5 of "hello world"
           {"X-Amz-Storage-Class", "STANDARD"},
           {"x-amz-checksum-crc32", "DUoRhQ=="}}) {
    HttpReply attack = PresignedPut("/alpha-data/meta.txt", "hello world", {header});
    EXPECT_EQ(attack.status, 403) << header.first << ": " << attack.body;
    EXPECT_EQ(attack.ErrorCode(), "AccessDenied") << header.first;
  }
  EXPECT_EQ(Get("/alpha-data/meta.txt", key_).status, 404);
  // An unsigned x-amz-content-sha256 changes nothing on a presigned URL (its payload hash is
  // the query's), so it is let through as AWS does.
  EXPECT_EQ(PresignedPut("/alpha-data/meta.txt", "hello world",
                         {{"x-amz-content-sha256", "UNSIGNED-PAYLOAD"}})
                .status,
            200);
}

TEST_P(S3StorageAttackTest, HeaderSignedRequestWithUnsignedAmzHeaderIsRefused) {
  ASSERT_EQ(Put("/alpha-data/source.txt", "source bytes", key_).status, 200);

  // A captured signed PUT replayed with a copy source added: no copy.
  RawRequest attack;
  attack.method = "PUT";
  attack.path = "/alpha-data/target.txt";
  attack.key = key_;
  attack.unsigned_headers = {{"x-amz-copy-source", "/alpha-data/source.txt"}};
  HttpReply reply = Send(port_, attack);
  EXPECT_EQ(reply.status, 403) << reply.body;
  EXPECT_EQ(reply.ErrorCode(), "AccessDenied");
  EXPECT_EQ(Get("/alpha-data/target.txt", key_).status, 404);

  attack.unsigned_headers = {{"X-Amz-Meta-Note", "unsigned"}};
  attack.body = "x";
  reply = Send(port_, attack);
  EXPECT_EQ(reply.status, 403) << reply.body;
  EXPECT_EQ(Get("/alpha-data/target.txt", key_).status, 404);

  // The same copy with its header signed works.
  RawRequest copy;
  copy.method = "PUT";
  copy.path = "/alpha-data/target.txt";
  copy.key = key_;
  copy.headers = {{"x-amz-copy-source", "/alpha-data/source.txt"}};
  reply = Send(port_, copy);
  EXPECT_EQ(reply.status, 200) << reply.body;
  EXPECT_EQ(Get("/alpha-data/target.txt", key_).body, "source bytes");
}

// The endpoint's CORS answers, whatever backend holds the object: local only.
// Another site's page holds a presigned URL (leaked in a chat, a log, a referrer) and runs in
// a victim's browser: it may make the browser send the request, but without CORS headers for
// its origin the browser neither sends a preflighted PUT nor lets the page read any answer.
// (The URL works from curl anyway, as any presigned URL does: the signature is the grant.)
TEST_F(S3AttackTest, AnotherSitesPageCannotReadS3AnswersInABrowser) {
  ASSERT_EQ(Put("/alpha-data/private.txt", "private", key_).status, 200);
  const std::string get_query =
      PresignQuery(port_, "GET", "/alpha-data/private.txt", key_, absl::Now(), absl::Minutes(10));
  auto from = [&](std::string_view origin, const std::string& method) {
    RawRequest r;
    r.method = method;
    r.path = "/alpha-data/private.txt";
    r.query = method == "GET" ? get_query : "";
    r.headers = {{"Origin", std::string(origin)}};
    if (method == "OPTIONS") {
      r.headers.emplace_back("Access-Control-Request-Method", "PUT");
      r.headers.emplace_back("Access-Control-Request-Headers", "content-type");
    }
    return Send(port_, r);
  };
  for (std::string_view evil : {"https://evil.example", "http://127.0.0.1:8091", "null"}) {
    HttpReply preflight = from(evil, "OPTIONS");
    EXPECT_NE(preflight.status, 200) << evil;
    EXPECT_EQ(preflight.Header("access-control-allow-origin"), "") << evil;
    HttpReply read = from(evil, "GET");
    EXPECT_EQ(read.Header("access-control-allow-origin"), "") << evil;
    EXPECT_EQ(read.Header("access-control-allow-credentials"), "") << evil;
  }

  // The console's page may.
  HttpReply preflight = from(kConsoleOrigin, "OPTIONS");
  EXPECT_EQ(preflight.status, 200);
  EXPECT_EQ(preflight.Header("access-control-allow-origin"), kConsoleOrigin);
  HttpReply read = from(kConsoleOrigin, "GET");
  EXPECT_EQ(read.body, "private");
  EXPECT_EQ(read.Header("access-control-allow-origin"), kConsoleOrigin);
  EXPECT_EQ(read.Header("access-control-allow-credentials"), "");
}

// A tenant uploads a page (or an SVG) with scripts and sends a victim the link: opened from
// the S3 endpoint, it must not run there with the cookies that site may share with the
// console. Every object answer says nosniff and sandbox (no scripts, an opaque origin), and an
// active type is a download, unless a signer asked for a disposition of its own (then it is
// still sandboxed). The bytes themselves come back unchanged.
TEST_P(S3StorageAttackTest, ATenantsHtmlObjectCannotRunOnTheS3Site) {
  const std::string page = "<html><script>fetch('/api/session')</script></html>";
  for (const auto& [path, type] : std::vector<std::pair<std::string, std::string>>{
           {"/alpha-data/page.html", "text/html; charset=utf-8"},
           {"/alpha-data/image.svg", "image/svg+xml"},
           {"/alpha-data/page.xhtml", "application/xhtml+xml"}}) {
    RawRequest put;
    put.method = "PUT";
    put.path = path;
    put.body = page;
    put.key = key_;
    put.headers = {{"Content-Type", type}};
    ASSERT_EQ(Send(port_, put).status, 200) << path;

    RawRequest presigned;
    presigned.path = path;
    presigned.query = PresignQuery(port_, "GET", path, key_, absl::Now(), absl::Minutes(10));
    RawRequest head;
    head.method = "HEAD";
    head.path = path;
    head.key = key_;
    for (const HttpReply& got : {Get(path, key_), Send(port_, presigned), Send(port_, head)}) {
      EXPECT_EQ(got.status, 200) << path;
      EXPECT_EQ(got.Header("content-type"), type) << path;
      EXPECT_EQ(got.Header("x-content-type-options"), "nosniff") << path;
      EXPECT_EQ(got.Header("content-security-policy"), "sandbox") << path;
      EXPECT_EQ(got.Header("content-disposition"), "attachment") << path;
    }
    EXPECT_EQ(Get(path, key_).body, page);
  }
  // A plain object is shown inline (no disposition), still nosniff and sandboxed ...
  ASSERT_EQ(Put("/alpha-data/notes.txt", page, key_).status, 200);
  HttpReply plain = Get("/alpha-data/notes.txt", key_);
  EXPECT_EQ(plain.Header("content-disposition"), "");
  EXPECT_EQ(plain.Header("x-content-type-options"), "nosniff");
  EXPECT_EQ(plain.Header("content-security-policy"), "sandbox");
  // ... and a signed response-content-type that turns it into HTML makes it a download.
  RawRequest as_html;
  as_html.path = "/alpha-data/notes.txt";
  as_html.query = PresignQuery(port_, "GET", as_html.path, key_, absl::Now(), absl::Minutes(10),
                               "response-content-type=text%2Fhtml");
  HttpReply forced = Send(port_, as_html);
  EXPECT_EQ(forced.Header("content-type"), "text/html");
  EXPECT_EQ(forced.Header("content-disposition"), "attachment");
  // A signer who asks for inline gets it, sandboxed.
  RawRequest inline_page;
  inline_page.path = "/alpha-data/page.html";
  inline_page.query = PresignQuery(port_, "GET", inline_page.path, key_, absl::Now(),
                                   absl::Minutes(10), "response-content-disposition=inline");
  HttpReply shown = Send(port_, inline_page);
  EXPECT_EQ(shown.status, 200) << shown.body;
  EXPECT_EQ(shown.Header("content-disposition"), "inline");
  EXPECT_EQ(shown.Header("content-security-policy"), "sandbox");
  EXPECT_EQ(shown.Header("x-content-type-options"), "nosniff");
}

TEST_P(S3StorageAttackTest, KeyWithDotDotDoesNotLeaveTheBucket) {
  for (const char* path :
       {"/alpha-data/../beta-data/planted.txt", "/alpha-data/%2e%2e/beta-data/planted.txt",
        "/alpha-data/a/../../beta-data/planted.txt", "/alpha-data/..%2fbeta-data%2fplanted.txt",
        "/alpha-data/%2E%2E%2F%2E%2E%2Fplanted.txt"}) {
    HttpReply reply = Put(path, "planted", key_);
    EXPECT_GE(reply.status, 400) << path << ": " << reply.body;
    EXPECT_LT(reply.status, 500) << path << ": " << reply.body;
  }
  EXPECT_EQ(Get("/beta-data/planted.txt", other_key_).status, 404);
  for (const fs::path& planted : FilesNamed("planted.txt")) {
    ADD_FAILURE() << "planted: " << planted;
  }
  // Keys that only look odd stay inside and work.
  EXPECT_EQ(Put("/alpha-data/a..b/..c", "fine", key_).status, 200);
  EXPECT_EQ(Get("/alpha-data/a..b/..c", key_).body, "fine");
}

// Folder markers ("a/b/" keys) as an attacker makes them: through "..", in another tenant's
// storage, through a symlink a workload planted in its own storage to leave it, or with bytes.
// Each is refused and no directory appears anywhere outside alpha's storage.
TEST_P(S3StorageAttackTest, FolderMarkersStayInsideTheirBucket) {
  for (const char* path :
       {"/alpha-data/../beta-data/planted-folder/", "/alpha-data/%2e%2e/beta-data/planted-folder/",
        "/alpha-data/a/../../planted-folder/", "/alpha-data/..%2fplanted-folder/",
        "/alpha-data/planted-folder//", "/alpha-data/./planted-folder/"}) {
    HttpReply reply = Put(path, "", key_);
    EXPECT_GE(reply.status, 400) << path << ": " << reply.body;
    EXPECT_LT(reply.status, 500) << path << ": " << reply.body;
  }
  HttpReply other = Put("/beta-data/planted-folder/", "", key_);
  EXPECT_EQ(other.status, 404) << other.body;
  EXPECT_EQ(other.ErrorCode(), "NoSuchBucket");
  // A workload makes its storage's "escape" a symlink to the directory above every volume.
  ASSERT_EQ(Put("/alpha-data/workload.txt", "its files", key_).status, 200);
  const fs::path data = stack_->StorageDataPath(StorageUid(token_, "alpha-data"));
  ASSERT_FALSE(data.empty());
  fs::create_directory_symlink(data.parent_path().parent_path(), data / "escape");
  for (const char* path : {"/alpha-data/escape/planted-folder/", "/alpha-data/escape/"}) {
    HttpReply reply = Put(path, "", key_);
    EXPECT_GE(reply.status, 400) << path << ": " << reply.body;
    EXPECT_LT(reply.status, 500) << path << ": " << reply.body;
  }
  HttpReply through = Get("/alpha-data/escape/", key_);
  EXPECT_TRUE(through.status == 403 || through.status == 404) << through.body;
  for (const fs::path& planted : FilesNamed("planted-folder")) {
    ADD_FAILURE() << "planted: " << planted;
  }
  // A marker holds no bytes.
  EXPECT_EQ(Put("/alpha-data/heavy/", "bytes", key_).ErrorCode(), "InvalidArgument");
  // What is fine stays fine.
  EXPECT_EQ(Put("/alpha-data/photos/", "", key_).status, 200);
  EXPECT_EQ(Get("/alpha-data/photos/", key_).status, 200);
}

// Alpha's accessor names beta's storage: every call answers as for a storage that does not
// exist, and beta's object is as beta left it.
TEST_P(S3StorageAttackTest, AnAccessorReachesNoOtherTenantsStorage) {
  ASSERT_EQ(Put("/beta-data/secret.txt", "beta's secret", other_key_).status, 200);
  const auto as_alpha = [&](const std::string& method, const std::string& path,
                            const std::string& query = "", const std::string& body = "") {
    RawRequest r;
    r.method = method;
    r.path = path;
    r.query = query;
    r.body = body;
    r.key = key_;
    return Send(port_, r);
  };
  // Read, overwrite, delete, list, and begin a multipart upload.
  for (const auto& [method, path, query] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"GET", "/beta-data/secret.txt", ""},
           {"PUT", "/beta-data/secret.txt", ""},
           {"DELETE", "/beta-data/secret.txt", ""},
           {"GET", "/beta-data", "list-type=2"},
           {"POST", "/beta-data/secret.txt", "uploads"}}) {
    HttpReply reply = as_alpha(method, path, query, method == "PUT" ? "overwritten" : "");
    EXPECT_EQ(reply.status, 404) << method << " " << path << ": " << reply.body;
    EXPECT_EQ(reply.ErrorCode(), "NoSuchBucket") << method << " " << path;
  }
  EXPECT_EQ(as_alpha("HEAD", "/beta-data").status, 404);
  HttpReply buckets = as_alpha("GET", "/");
  ASSERT_EQ(buckets.status, 200) << buckets.body;
  EXPECT_FALSE(absl::StrContains(buckets.body, "beta-data")) << buckets.body;
  EXPECT_TRUE(absl::StrContains(buckets.body, "<Name>alpha-data</Name>")) << buckets.body;
  EXPECT_EQ(Get("/beta-data/secret.txt", other_key_).body, "beta's secret");
}

// A connection to the endpoint from `source` (bound before connecting) that sends `start`; -1
// when the connection failed.
int ClientSending(int port, const char* source, std::string_view start) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in local{};
  local.sin_family = AF_INET;
  inet_pton(AF_INET, source, &local.sin_addr);
  sockaddr_in server{};
  server.sin_family = AF_INET;
  server.sin_port = htons(static_cast<uint16_t>(port));
  server.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof(local)) != 0 ||
      ::connect(fd, reinterpret_cast<sockaddr*>(&server), sizeof(server)) != 0) {
    ::close(fd);
    return -1;
  }
  [[maybe_unused]] ssize_t n = ::send(fd, start.data(), start.size(), MSG_NOSIGNAL);
  return fd;
}

// A connection from `source` that sends half a request head and stalls.
int StalledClient(int port, const char* source) {
  return ClientSending(port, source, "GET /alpha-data/obj HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Am");
}

// True when the server closed `fd` (or answered and closed) within `timeout`.
bool ClosedByServer(int fd, absl::Duration timeout) {
  timeval tv = absl::ToTimeval(timeout);
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  char buffer[4096];
  for (;;) {
    ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
    if (n == 0 || (n < 0 && errno == ECONNRESET)) return true;
    if (n < 0) return false;  // timed out
  }
}

// The endpoint's workers, whatever backend holds the object: local only.
TEST_F(S3AttackTest, SlowHeaderClientsDoNotStarveTheEndpoint) {
  ASSERT_EQ(Put("/alpha-data/obj", "still served", key_).status, 200);
  // 200 stalled clients from another address (the endpoint's 64 workers, 3 times over).
  std::vector<int> stalled;
  for (int i = 0; i < 200; ++i) {
    int fd = StalledClient(port_, "127.0.0.2");
    ASSERT_GE(fd, 0) << "connection " << i;
    stalled.push_back(fd);
  }
  // While they stall, a normal client from another address gets its object.
  for (int i = 0; i < 5; ++i) {
    HttpReply got = Get("/alpha-data/obj", key_);
    EXPECT_EQ(got.status, 200) << got.body;
    EXPECT_EQ(got.body, "still served");
  }
  // ... before their header timeout ran out: more stalled connections than the endpoint has
  // workers are still open (those past the per-address cap were answered 503 at once).
  int still_open = 0;
  for (int fd : stalled) {
    char byte;
    ssize_t n = ::recv(fd, &byte, 1, MSG_DONTWAIT | MSG_PEEK);
    still_open += (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) ? 1 : 0;
  }
  EXPECT_GT(still_open, 64) << "the stalled clients were dropped before the reads were served";
  // Every stalled client loses its connection: past the per-address cap at once (503), the
  // others at the header timeout.
  int closed = 0;
  for (int fd : stalled) {
    closed += ClosedByServer(fd, absl::Seconds(kHeaderTimeoutSeconds + 10)) ? 1 : 0;
    ::close(fd);
  }
  EXPECT_EQ(closed, 200);
  EXPECT_EQ(Get("/alpha-data/obj", key_).body, "still served");
}

// The endpoint's workers, whatever backend holds the object: local only.
// The body of a presigned PUT that declares 4 MiB and sends a byte every half second (each pause
// far under the body idle timeout): more such uploads than the endpoint has workers, from a
// few addresses (each under its cap), used to hold every worker for hours.
TEST_F(S3AttackTest, SlowBodyClientsDoNotStarveTheEndpoint) {
  ASSERT_EQ(Put("/alpha-data/obj", "still served", key_).status, 200);
  const std::string path = "/alpha-data/trickled";
  const std::string head = absl::StrCat(
      "PUT ", path, "?", PresignQuery(port_, "PUT", path, key_, absl::Now(), absl::Minutes(10)),
      " HTTP/1.1\r\nHost: 127.0.0.1:", port_, "\r\nContent-Length: 4194304\r\n\r\nx");
  std::vector<int> trickling;
  for (const char* source : {"127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"}) {
    for (int i = 0; i < 20; ++i) {
      int fd = ClientSending(port_, source, head);
      ASSERT_GE(fd, 0) << source << " connection " << i;
      trickling.push_back(fd);
    }
  }
  std::atomic<bool> done{false};
  std::thread trickler([&] {
    while (!done.load()) {
      for (int fd : trickling) {
        [[maybe_unused]] ssize_t n = ::send(fd, "x", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  });
  // While they trickle, a normal client from 127.0.0.1 gets its object (Send waits 30 s at
  // most: a liveness bound, not a speed one).
  HttpReply got = Get("/alpha-data/obj", key_);
  EXPECT_EQ(got.status, 200) << got.body;
  EXPECT_EQ(got.body, "still served");
  // Every trickled body is cut, answered 408 and closed, though it never paused for long.
  int cut = 0;
  for (int fd : trickling) {
    timeval tv = absl::ToTimeval(absl::Seconds(20));
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    std::string answer;
    char buffer[4096];
    ssize_t n;
    while ((n = ::recv(fd, buffer, sizeof(buffer), 0)) > 0) {
      answer.append(buffer, static_cast<size_t>(n));
    }
    cut += (n == 0 || errno == ECONNRESET) && absl::StartsWith(answer, "HTTP/1.1 408") ? 1 : 0;
  }
  done = true;
  trickler.join();
  for (int fd : trickling) {
    ::close(fd);
  }
  EXPECT_EQ(cut, static_cast<int>(trickling.size()));
  EXPECT_EQ(Get("/alpha-data/obj", key_).body, "still served");
}

TEST_P(S3StorageAttackTest, AwsCliCopyStillWorks) {
  std::optional<std::string> aws = storage::s3::testing::FindClient("aws");
  if (!aws) {
    GPUAAS_SKIP_OR_FAIL_IN_CI() << "the AWS CLI is not installed (tools/install-deps installs it)";
  }
  ASSERT_EQ(Put("/alpha-data/cli-source.txt", "copied by the cli", key_).status, 200);
  auto r = storage::s3::testing::RunCommand(
      {*aws, "--endpoint-url", stack_->s3_endpoint(), "s3", "cp", "s3://alpha-data/cli-source.txt",
       "s3://alpha-data/cli-target.txt"},
      storage::s3::testing::AwsEnv(dir_.path() / "aws", key_));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(Get("/alpha-data/cli-target.txt", key_).body, "copied by the cli");
}

}  // namespace
}  // namespace gpuaas::platform_testing
