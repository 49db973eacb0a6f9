// SigV4 against the worked examples of AWS's S3 documentation ("Signature Calculations for
// the Authorization Header", "Authenticating Requests: Using Query Parameters", "Transferring
// Payload in Multiple Chunks"), all with AKIAIOSFODNN7EXAMPLE.
#include "services/storage/s3/sigv4.h"

#include <gtest/gtest.h>

namespace gpuaas::storage::s3 {
namespace {

constexpr std::string_view kSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
const Credential kCredential{"AKIAIOSFODNN7EXAMPLE", "20130524", "us-east-1", "s3"};
constexpr std::string_view kDate = "20130524T000000Z";

std::string SignatureOf(const CanonicalInput& in) {
  return Sign(SigningKey(kSecret, kCredential),
              StringToSign(kDate, kCredential.Scope(), CanonicalRequest(in)));
}

TEST(SigV4Test, AwsGetObjectExample) {
  QueryParams query;
  CanonicalInput in;
  in.method = "GET";
  in.decoded_path = "/test.txt";
  in.query = &query;
  in.headers = {{"host", "examplebucket.s3.amazonaws.com"},
                {"range", "bytes=0-9"},
                {"x-amz-content-sha256", std::string(kEmptySha256)},
                {"x-amz-date", std::string(kDate)}};
  in.payload_hash = kEmptySha256;
  EXPECT_EQ(Sha256Hex(CanonicalRequest(in)),
            "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972");
  EXPECT_EQ(SignatureOf(in), "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
}

TEST(SigV4Test, AwsPutObjectExampleEncodesThePathOnce) {
  QueryParams query;
  std::string hash = Sha256Hex("Welcome to Amazon S3.");
  ASSERT_EQ(hash, "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
  CanonicalInput in;
  in.method = "PUT";
  in.decoded_path = "/test$file.text";
  in.query = &query;
  in.headers = {{"date", "Fri, 24 May 2013 00:00:00 GMT"},
                {"host", "examplebucket.s3.amazonaws.com"},
                {"x-amz-content-sha256", hash},
                {"x-amz-date", std::string(kDate)},
                {"x-amz-storage-class", "REDUCED_REDUNDANCY"}};
  in.payload_hash = hash;
  EXPECT_EQ(CanonicalRequest(in).substr(0, 21), "PUT\n/test%24file.text");
  EXPECT_EQ(SignatureOf(in), "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");
}

TEST(SigV4Test, AwsListObjectsExampleSortsTheQuery) {
  auto query = ParseQuery("prefix=J&max-keys=2");
  ASSERT_TRUE(query.ok());
  CanonicalInput in;
  in.method = "GET";
  in.decoded_path = "/";
  in.query = &*query;
  in.headers = {{"host", "examplebucket.s3.amazonaws.com"},
                {"x-amz-content-sha256", std::string(kEmptySha256)},
                {"x-amz-date", std::string(kDate)}};
  in.payload_hash = kEmptySha256;
  EXPECT_EQ(SignatureOf(in), "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
}

TEST(SigV4Test, AwsPresignedExample) {
  auto query = ParseQuery(
      "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-"
      "east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-"
      "SignedHeaders=host&X-Amz-Signature="
      "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404");
  ASSERT_TRUE(query.ok());
  auto claim = ParsePresignedQuery(*query);
  ASSERT_TRUE(claim.ok()) << claim.status();
  EXPECT_EQ(claim->credential.access_key_id, "AKIAIOSFODNN7EXAMPLE");
  EXPECT_EQ(claim->credential.Scope(), kCredential.Scope());
  EXPECT_EQ(claim->expires, absl::Hours(24));
  EXPECT_EQ(claim->signed_headers, std::vector<std::string>{"host"});
  CanonicalInput in;
  in.method = "GET";
  in.decoded_path = "/test.txt";
  in.query = &*query;
  in.skip_signature_param = true;
  in.headers = {{"host", "examplebucket.s3.amazonaws.com"}};
  in.payload_hash = kUnsignedPayload;
  EXPECT_EQ(SignatureOf(in), claim->signature);
}

TEST(SigV4Test, AwsChunkedUploadExample) {
  QueryParams query;
  CanonicalInput in;
  in.method = "PUT";
  in.decoded_path = "/examplebucket/chunkObject.txt";
  in.query = &query;
  in.headers = {{"content-encoding", "aws-chunked"},
                {"content-length", "66824"},
                {"host", "s3.amazonaws.com"},
                {"x-amz-content-sha256", std::string(kStreamingPayload)},
                {"x-amz-date", std::string(kDate)},
                {"x-amz-decoded-content-length", "66560"},
                {"x-amz-storage-class", "REDUCED_REDUNDANCY"}};
  in.payload_hash = kStreamingPayload;
  std::string seed = SignatureOf(in);
  EXPECT_EQ(seed, "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9");

  std::string key = SigningKey(kSecret, kCredential);
  std::string first = Sign(
      key, ChunkStringToSign(kDate, kCredential.Scope(), seed, Sha256Hex(std::string(65536, 'a'))));
  EXPECT_EQ(first, "ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648");
  std::string second = Sign(
      key, ChunkStringToSign(kDate, kCredential.Scope(), first, Sha256Hex(std::string(1024, 'a'))));
  EXPECT_EQ(second, "0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497");
  std::string last = Sign(key, ChunkStringToSign(kDate, kCredential.Scope(), second, kEmptySha256));
  EXPECT_EQ(last, "b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9");
}

TEST(SigV4Test, ParsesTheAuthorizationHeader) {
  auto claim = ParseAuthorizationHeader(
      "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
      "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
      "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
  ASSERT_TRUE(claim.ok()) << claim.status();
  EXPECT_EQ(claim->credential.access_key_id, "AKIAIOSFODNN7EXAMPLE");
  EXPECT_EQ(claim->credential.region, "us-east-1");
  EXPECT_EQ(claim->signed_headers.size(), 4u);

  EXPECT_FALSE(ParseAuthorizationHeader("AWS AKID:sig").ok());
  EXPECT_FALSE(
      ParseAuthorizationHeader("AWS4-HMAC-SHA256 Credential=A/20130524/us-east-1/s3/aws4_request, "
                               "SignedHeaders=x-amz-date, Signature=" +
                               std::string(64, 'a'))
          .ok())
      << "host must be signed";
  EXPECT_FALSE(
      ParseAuthorizationHeader("AWS4-HMAC-SHA256 Credential=A/2013/us-east-1/s3/aws4_request, "
                               "SignedHeaders=host, Signature=" +
                               std::string(64, 'a'))
          .ok());
  EXPECT_FALSE(
      ParseAuthorizationHeader("AWS4-HMAC-SHA256 Credential=A/20130524/us-east-1/s3/aws4_request, "
                               "SignedHeaders=host, Signature=XYZ")
          .ok());
}

TEST(SigV4Test, PresignedExpiryIsAtMostAWeek) {
  auto query = [](std::string expires) {
    return *ParseQuery(
        "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=A%2F20130524%2Fus-east-1%2Fs3%"
        "2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-SignedHeaders=host&X-Amz-Signature=" +
        std::string(64, 'a') + "&X-Amz-Expires=" + expires);
  };
  EXPECT_TRUE(ParsePresignedQuery(query("604800")).ok());
  EXPECT_FALSE(ParsePresignedQuery(query("604801")).ok());
  EXPECT_FALSE(ParsePresignedQuery(query("0")).ok());
  EXPECT_FALSE(ParsePresignedQuery(query("soon")).ok());
}

TEST(SigV4Test, UriEncodingFollowsAwsRules) {
  EXPECT_EQ(UriEncode("a b+c~d_e-f.g", true), "a%20b%2Bc~d_e-f.g");
  EXPECT_EQ(UriEncode("dir/sub/ключ", false), "dir/sub/%D0%BA%D0%BB%D1%8E%D1%87");
  EXPECT_EQ(UriEncode("a/b", true), "a%2Fb");
  EXPECT_EQ(UriEncode("!'()*$", false), "%21%27%28%29%2A%24");
  EXPECT_EQ(*UriDecode("%2e%2e/x%2Fy+z", false), "../x/y+z");
  EXPECT_EQ(*UriDecode("x+y", true), "x y");
  EXPECT_FALSE(UriDecode("%zz", false).ok());
  EXPECT_FALSE(UriDecode("abc%2", false).ok());
}

TEST(SigV4Test, CanonicalQueryEncodesNamesAndValuesAndSorts) {
  auto query = ParseQuery("uploads&b=2&a=x%20y&a=%2B&prefix=dir%2F");
  ASSERT_TRUE(query.ok());
  CanonicalInput in;
  in.method = "GET";
  in.decoded_path = "/b";
  in.query = &*query;
  in.payload_hash = kEmptySha256;
  EXPECT_EQ(CanonicalRequest(in),
            "GET\n/b\na=%2B&a=x%20y&b=2&prefix=dir%2F&uploads=\n\n\n" + std::string(kEmptySha256));
}

TEST(SigV4Test, CanonicalHeaderValueTrimsAndJoins) {
  EXPECT_EQ(CanonicalHeaderValue({"  a   b  ", "c"}), "a b,c");
  EXPECT_EQ(CanonicalHeaderValue({}), "");
}

TEST(SigV4Test, AmzDateAndComparisons) {
  EXPECT_EQ(*ParseAmzDate("20130524T000000Z"), absl::FromUnixSeconds(1369353600));
  EXPECT_FALSE(ParseAmzDate("2013-05-24T00:00:00Z").ok());
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "ab"));
  EXPECT_TRUE(IsSha256Hex(kEmptySha256));
  EXPECT_FALSE(IsSha256Hex(kUnsignedPayload));
}

}  // namespace
}  // namespace gpuaas::storage::s3
