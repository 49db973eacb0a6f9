// The S3 endpoint with the clients people use: the AWS CLI (cp, ls, sync, rm, presign, with
// multipart above its 8 MiB threshold), rclone (provider Other), s3cmd, boto3 and curl on a
// presigned URL. Each test skips with a message when its client is not installed.
#include <gtest/gtest.h>

#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "libs/testing/ci_skip.h"
#include "services/storage/s3/testing/client_tools.h"
#include "services/storage/s3/testing/test_stack.h"

namespace gpuaas::storage::s3::testing {
namespace {

namespace fs = std::filesystem;

#define REQUIRE_CLIENT(var, name)                                                                \
  auto var = FindClient(name);                                                                   \
  if (!var) {                                                                                    \
    GPUAAS_SKIP_OR_FAIL_IN_CI() << name << " is not installed (tools/install-deps installs it)"; \
  }

class S3ClientsTest : public ::testing::Test {
 protected:
  explicit S3ClientsTest(StackBackend backend = StackBackend::kLocal) : stack_({}, backend) {}

  fs::path Dir(const std::string& name) {
    fs::path path = temp_.path() / name;
    fs::create_directories(path);
    return path;
  }
  // A small tree: nested folders, a name with spaces and unicode, an empty file.
  fs::path MakeTree(const std::string& name) {
    fs::path root = Dir(name);
    WriteFile(root / "a.txt", "alpha\n");
    WriteFile(root / "sub dir/b.txt", "beta with spaces\n");
    WriteFile(root / "sub dir/deeper/ключ+plus.bin", std::string(70'000, 'z'));
    WriteFile(root / "empty", "");
    return root;
  }
  static void ExpectSameTree(const fs::path& a, const fs::path& b) {
    int files = 0;
    for (const auto& entry : fs::recursive_directory_iterator(a)) {
      if (!entry.is_regular_file()) {
        continue;
      }
      fs::path relative = fs::relative(entry.path(), a);
      ASSERT_TRUE(fs::exists(b / relative)) << relative;
      EXPECT_EQ(ReadFile(entry.path()), ReadFile(b / relative)) << relative;
      ++files;
    }
    EXPECT_GT(files, 0);
  }
  CommandResult Aws(const std::string& aws, std::vector<std::string> args,
                    const TestKey& key = kKeyRw) {
    std::vector<std::string> argv = {aws};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.push_back("--endpoint-url=" + stack_.endpoint());
    return RunCommand(argv, AwsEnv(temp_.path() / "aws-home", key));
  }

  // A boto3 script run against the stack as the read-write key: argv 1 to 3 are the
  // endpoint, key id and secret.
  CommandResult Boto3(const std::string& python, const std::string& script) {
    return RunCommand({python, "-c", script, stack_.endpoint(), kKeyRw.id, kKeyRw.secret},
                      {"HOME=" + Dir("boto-home").string(), "AWS_EC2_METADATA_DISABLED=true",
                       "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null"});
  }
  // rclone with the remote "x:" on the stack, as the read-write key.
  CommandResult Rclone(const std::string& rclone, std::vector<std::string> args) {
    args.insert(args.begin(), rclone);
    return RunCommand(args, RcloneEnv(temp_.path() / "rclone-home", stack_, kKeyRw));
  }
  // s3cmd configured for the stack, as the read-write key.
  CommandResult S3cmd(const std::string& s3cmd, std::vector<std::string> args) {
    const fs::path home = temp_.path() / "s3cmd-home";
    args.insert(args.begin(), {s3cmd, "--config=" + S3cmdConfig(home, stack_, kKeyRw).string()});
    return RunCommand(args, {"HOME=" + home.string()});
  }

  gpuaas::testing::TempDir temp_;
  S3TestStack stack_;
};

// The AWS CLI (multipart uploads of a 20 MB file included) on each backend.
class S3ClientsOnEachBackendTest : public S3ClientsTest,
                                   public ::testing::WithParamInterface<StackBackend> {
 protected:
  S3ClientsOnEachBackendTest() : S3ClientsTest(GetParam()) {}
};

INSTANTIATE_TEST_SUITE_P(Backends, S3ClientsOnEachBackendTest,
                         ::testing::Values(StackBackend::kLocal, StackBackend::kCeph),
                         [](const ::testing::TestParamInfo<StackBackend>& info) {
                           return StackBackendName(info.param);
                         });

TEST_P(S3ClientsOnEachBackendTest, AwsCliCopyListSyncRemove) {
  REQUIRE_CLIENT(aws, "aws");
  fs::path tree = MakeTree("tree");
  fs::path big = Dir("big") / "20mb.bin";
  WritePatternFile(big, 20 << 20, 7);  // multipart at the CLI's 8 MiB threshold

  CommandResult r = Aws(*aws, {"s3", "cp", (tree / "a.txt").string(), "s3://sto_a/one/a.txt"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = Aws(*aws, {"s3", "cp", big.string(), "s3://sto_a/big/20mb.bin"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = Aws(*aws, {"s3", "sync", tree.string(), "s3://sto_a/synced"});
  ASSERT_EQ(r.exit_code, 0) << r.output;

  r = Aws(*aws, {"s3", "ls", "s3://sto_a/"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(absl::StrContains(r.output, "PRE synced/")) << r.output;
  r = Aws(*aws, {"s3", "ls", "--recursive", "s3://sto_a/synced/"});
  EXPECT_TRUE(absl::StrContains(r.output, "synced/sub dir/deeper/ключ+plus.bin")) << r.output;
  r = Aws(*aws, {"s3", "ls"});
  EXPECT_TRUE(absl::StrContains(r.output, "sto_a")) << r.output;

  fs::path back = Dir("back");
  r = Aws(*aws, {"s3", "sync", "s3://sto_a/synced", back.string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ExpectSameTree(tree, back);
  r = Aws(*aws, {"s3", "cp", "s3://sto_a/big/20mb.bin", (back / "20mb.bin").string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(FileSha256(back / "20mb.bin"), FileSha256(big));

  // A second sync has nothing to do.
  r = Aws(*aws, {"s3", "sync", tree.string(), "s3://sto_a/synced"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_FALSE(absl::StrContains(r.output, "upload:")) << r.output;

  r = Aws(*aws, {"s3", "rm", "--recursive", "s3://sto_a/synced"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = Aws(*aws, {"s3", "ls", "--recursive", "s3://sto_a/synced/"});
  EXPECT_TRUE(r.output.empty() || !absl::StrContains(r.output, "a.txt")) << r.output;

  r = Aws(*aws, {"s3", "cp", (tree / "a.txt").string(), "s3://sto_a/ro.txt"}, kKeyRo);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(r.output, "AccessDenied")) << r.output;
  r = Aws(*aws, {"s3", "ls", "s3://sto_b/"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(r.output, "NoSuchBucket")) << r.output;
}

// Folder markers as the AWS console ("Create folder"), s3fs and sync tools make them: a
// zero-byte key ending in "/", listed as a key and as a common prefix, kept when the folder's
// last file goes, and gone when deleted itself.
TEST_P(S3ClientsOnEachBackendTest, FoldersAsTheConsoleAndS3fsMakeThem) {
  REQUIRE_CLIENT(aws, "aws");
  fs::path file = Dir("f") / "a.jpg";
  WriteFile(file, "jpeg");
  CommandResult r = Aws(*aws, {"s3api", "put-object", "--bucket", "sto_a", "--key", "photos/"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = Aws(*aws, {"s3", "ls", "s3://sto_a/"});
  EXPECT_TRUE(absl::StrContains(r.output, "PRE photos/")) << r.output;
  r = Aws(*aws, {"s3api", "list-objects-v2", "--bucket", "sto_a", "--prefix", "photos/", "--query",
                 "Contents[].[Key,Size]", "--output", "text"});
  EXPECT_EQ(absl::StripAsciiWhitespace(r.output), "photos/\t0") << r.output;
  r = Aws(*aws, {"s3api", "head-object", "--bucket", "sto_a", "--key", "photos/", "--query",
                 "ContentLength", "--output", "text"});
  EXPECT_EQ(absl::StripAsciiWhitespace(r.output), "0") << r.output;
  // The folder outlives its last file.
  ASSERT_EQ(Aws(*aws, {"s3", "cp", file.string(), "s3://sto_a/photos/a.jpg"}).exit_code, 0);
  ASSERT_EQ(Aws(*aws, {"s3", "rm", "s3://sto_a/photos/a.jpg"}).exit_code, 0);
  r = Aws(*aws, {"s3", "ls", "s3://sto_a/photos/"});
  EXPECT_TRUE(absl::StrContains(r.output, " 0 photos/") || absl::StrContains(r.output, " 0 \n"))
      << r.output;
  // A marker with bytes is no marker.
  fs::path bytes = Dir("g") / "x";
  WriteFile(bytes, "x");
  r = Aws(*aws,
          {"s3api", "put-object", "--bucket", "sto_a", "--key", "bad/", "--body", bytes.string()});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(r.output, "InvalidArgument")) << r.output;
  r = Aws(*aws, {"s3api", "delete-object", "--bucket", "sto_a", "--key", "photos/"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = Aws(*aws, {"s3", "ls", "s3://sto_a/"});
  EXPECT_FALSE(absl::StrContains(r.output, "photos/")) << r.output;
}

TEST_F(S3ClientsTest, FoldersWithRcloneS3cmdAndBoto3) {
  REQUIRE_CLIENT(rclone, "rclone");
  REQUIRE_CLIENT(s3cmd, "s3cmd");
  REQUIRE_CLIENT(python, "python3");
  // boto3, as s3fs and the console do it: a zero-byte put of "models/".
  std::string script = R"PY(
import sys, boto3
from botocore.config import Config
s3 = boto3.client("s3", endpoint_url=sys.argv[1], aws_access_key_id=sys.argv[2],
                  aws_secret_access_key=sys.argv[3], region_name="us-east-1",
                  config=Config(s3={"addressing_style": "path"}))
s3.put_object(Bucket="sto_a", Key="models/", Body=b"")
s3.put_object(Bucket="sto_a", Key="models/lora/", Body=b"")
page = s3.list_objects_v2(Bucket="sto_a", Prefix="models/", Delimiter="/")
assert [o["Key"] for o in page.get("Contents", [])] == ["models/"], page
assert [p["Prefix"] for p in page.get("CommonPrefixes", [])] == ["models/lora/"], page
assert s3.get_object(Bucket="sto_a", Key="models/lora/")["Body"].read() == b""
s3.delete_object(Bucket="sto_a", Key="models/lora/")
page = s3.list_objects_v2(Bucket="sto_a", Prefix="models/")
assert [o["Key"] for o in page.get("Contents", [])] == ["models/"], page
print("ok")
)PY";
  CommandResult r = Boto3(*python, script);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // rclone sees the empty folder as a directory; its mkdir of a new one succeeds.
  r = Rclone(*rclone, {"lsd", "x:sto_a"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(absl::StrContains(r.output, " models")) << r.output;
  r = Rclone(*rclone, {"mkdir", "x:sto_a/datasets"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  // s3cmd lists it as a DIR, and deletes it (the marker among the keys under it).
  r = S3cmd(*s3cmd, {"ls", "s3://sto_a/"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(absl::StrContains(r.output, "DIR  s3://sto_a/models/")) << r.output;
  r = S3cmd(*s3cmd, {"del", "--recursive", "s3://sto_a/models/"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  r = S3cmd(*s3cmd, {"ls", "s3://sto_a/"});
  EXPECT_FALSE(absl::StrContains(r.output, "models/")) << r.output;
}

TEST_F(S3ClientsTest, PresignedGetWithCurl) {
  REQUIRE_CLIENT(aws, "aws");
  REQUIRE_CLIENT(curl, "curl");
  fs::path file = Dir("p") / "shared report.txt";
  WriteFile(file, "presigned content\n");
  ASSERT_EQ(
      Aws(*aws, {"s3", "cp", file.string(), "s3://sto_a/reports/shared report.txt"}).exit_code, 0);
  CommandResult url =
      Aws(*aws, {"s3", "presign", "s3://sto_a/reports/shared report.txt", "--expires-in", "300"});
  ASSERT_EQ(url.exit_code, 0) << url.output;
  std::string link(absl::StripAsciiWhitespace(url.output));
  CommandResult got = RunCommand({*curl, "-sS", "--fail", link}, {});
  ASSERT_EQ(got.exit_code, 0) << got.output << "\n" << link;
  EXPECT_EQ(got.output, "presigned content\n");
  CommandResult tampered = RunCommand({*curl, "-s", "-o", "/dev/null", "-w", "%{http_code}",
                                       absl::StrReplaceAll(link, {{"reports", "Reports"}})},
                                      {});
  EXPECT_EQ(tampered.output, "403");
}

TEST_F(S3ClientsTest, RcloneCopyListSyncDelete) {
  REQUIRE_CLIENT(rclone, "rclone");
  fs::path tree = MakeTree("tree");
  auto rc = [&](std::vector<std::string> args) { return Rclone(*rclone, std::move(args)); };
  CommandResult r = rc({"copy", tree.string(), "x:sto_a/rc"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = rc({"ls", "x:sto_a/rc"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(absl::StrContains(r.output, "sub dir/b.txt")) << r.output;
  fs::path back = Dir("rc-back");
  r = rc({"sync", "x:sto_a/rc", back.string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ExpectSameTree(tree, back);
  r = rc({"check", tree.string(), "x:sto_a/rc"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  r = rc({"delete", "x:sto_a/rc"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = rc({"ls", "x:sto_a/rc"});
  EXPECT_FALSE(absl::StrContains(r.output, "a.txt")) << r.output;
}

TEST_F(S3ClientsTest, S3cmdPutListGetDelete) {
  REQUIRE_CLIENT(s3cmd, "s3cmd");
  fs::path tree = MakeTree("tree");
  auto cmd = [&](std::vector<std::string> args) { return S3cmd(*s3cmd, std::move(args)); };
  CommandResult r = cmd({"put", (tree / "a.txt").string(), "s3://sto_a/s3cmd/a.txt"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = cmd({"ls", "s3://sto_a/s3cmd/"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(absl::StrContains(r.output, "s3://sto_a/s3cmd/a.txt")) << r.output;
  fs::path out = Dir("s3cmd-out") / "a.txt";
  r = cmd({"get", "s3://sto_a/s3cmd/a.txt", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(ReadFile(out), "alpha\n");
  r = cmd({"del", "s3://sto_a/s3cmd/a.txt"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST_F(S3ClientsTest, Boto3) {
  REQUIRE_CLIENT(python, "python3");
  if (RunCommand({*python, "-c", "import boto3"}, {}).exit_code != 0) {
    GPUAAS_SKIP_OR_FAIL_IN_CI()
        << "python3-boto3 is not installed (tools/install-deps installs it)";
  }
  std::string script = R"PY(
import sys, boto3, botocore
from botocore.config import Config
s3 = boto3.client("s3", endpoint_url=sys.argv[1], aws_access_key_id=sys.argv[2],
                  aws_secret_access_key=sys.argv[3], region_name="us-east-1",
                  config=Config(s3={"addressing_style": "path"}))
s3.put_object(Bucket="sto_a", Key="boto/x.txt", Body=b"0123456789", ContentType="text/plain")
assert s3.get_object(Bucket="sto_a", Key="boto/x.txt", Range="bytes=2-4")["Body"].read() == b"234"
head = s3.head_object(Bucket="sto_a", Key="boto/x.txt")
assert head["ContentLength"] == 10 and head["ContentType"] == "text/plain", head
s3.copy_object(Bucket="sto_a", Key="boto/y.txt", CopySource={"Bucket": "sto_a", "Key": "boto/x.txt"})
keys = [o["Key"] for p in s3.get_paginator("list_objects_v2").paginate(Bucket="sto_a", Prefix="boto/", PaginationConfig={"PageSize": 1}) for o in p.get("Contents", [])]
assert keys == ["boto/x.txt", "boto/y.txt"], keys
up = s3.create_multipart_upload(Bucket="sto_a", Key="boto/mp")["UploadId"]
s3.upload_part(Bucket="sto_a", Key="boto/mp", UploadId=up, PartNumber=1, Body=b"p" * 10)
assert [u["UploadId"] for u in s3.list_multipart_uploads(Bucket="sto_a").get("Uploads", [])] == [up]
assert len(s3.list_parts(Bucket="sto_a", Key="boto/mp", UploadId=up)["Parts"]) == 1
s3.abort_multipart_upload(Bucket="sto_a", Key="boto/mp", UploadId=up)
out = s3.delete_objects(Bucket="sto_a", Delete={"Objects": [{"Key": "boto/x.txt"}, {"Key": "boto/y.txt"}]})
assert len(out["Deleted"]) == 2, out
try:
    s3.get_object(Bucket="sto_a", Key="boto/x.txt")
    raise SystemExit("expected NoSuchKey")
except s3.exceptions.NoSuchKey:
    pass
try:
    s3.head_bucket(Bucket="sto_b")
    raise SystemExit("expected 404")
except botocore.exceptions.ClientError as e:
    assert e.response["Error"]["Code"] == "404", e.response
print("ok")
)PY";
  CommandResult r = Boto3(*python, script);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(absl::StrContains(r.output, "ok")) << r.output;
}

TEST(S3TlsTest, AwsCliAndCurlOverHttps) {
  REQUIRE_CLIENT(aws, "aws");
  REQUIRE_CLIENT(curl, "curl");
  gpuaas::testing::TempDir temp;
  fs::path certs = temp.path() / "certs";
  CommandResult made = RunCommand({GPUAAS_GEN_CERTS, certs.string(), "storage"}, {});
  ASSERT_EQ(made.exit_code, 0) << made.output;
  ServerOptions options;
  options.tls_cert_file = (certs / "storage.crt").string();
  options.tls_key_file = (certs / "storage.key").string();
  S3TestStack stack(options);
  ASSERT_TRUE(absl::StartsWith(stack.endpoint(), "https://"));

  std::vector<std::string> env = AwsEnv(temp.path() / "aws-home", kKeyRw);
  env.push_back("AWS_CA_BUNDLE=" + (certs / "ca.crt").string());
  fs::path file = temp.path() / "tls.txt";
  WriteFile(file, "over tls\n");
  // Over HTTPS botocore sends UNSIGNED-PAYLOAD with a Content-MD5.
  CommandResult r = RunCommand(
      {*aws, "s3", "cp", file.string(), "s3://sto_a/tls.txt", "--endpoint-url", stack.endpoint()},
      env);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  fs::path back = temp.path() / "back.txt";
  r = RunCommand(
      {*aws, "s3", "cp", "s3://sto_a/tls.txt", back.string(), "--endpoint-url", stack.endpoint()},
      env);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(ReadFile(back), "over tls\n");

  r = RunCommand({*aws, "s3", "presign", "s3://sto_a/tls.txt", "--endpoint-url", stack.endpoint()},
                 env);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  CommandResult got = RunCommand({*curl, "-sS", "--fail", "--cacert", (certs / "ca.crt").string(),
                                  std::string(absl::StripAsciiWhitespace(r.output))},
                                 {});
  EXPECT_EQ(got.exit_code, 0) << got.output;
  EXPECT_EQ(got.output, "over tls\n");
  // Plain HTTP on the TLS port gets nowhere.
  CommandResult plain =
      RunCommand({*curl, "-s", "-m", "5", "-o", "/dev/null", "-w", "%{http_code}",
                  absl::StrCat("http://127.0.0.1:", stack.port(), "/sto_a/tls.txt")},
                 {});
  EXPECT_EQ(plain.output, "000");
}

}  // namespace
}  // namespace gpuaas::storage::s3::testing
