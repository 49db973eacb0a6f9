#include "services/storage/s3/xml.h"

#include <gtest/gtest.h>

#include "services/storage/s3/errors.h"

namespace gpuaas::storage::s3 {
namespace {

TEST(XmlTest, EscapesText) {
  EXPECT_EQ(XmlEscape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&apos;");
  EXPECT_EQ(XmlEscape(std::string("x\x01y\tz", 5)), "x&#x1;y\tz");
  EXPECT_EQ(XmlEscape("ключ"), "ключ");
}

TEST(XmlTest, WritesADocument) {
  XmlWriter xml("Root");
  xml.Open("A");
  xml.Element("Key", "a&b");
  xml.Close("A");
  EXPECT_EQ(xml.Finish(),
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Root "
            "xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><A><Key>a&amp;b</Key></A></Root>");
}

TEST(XmlTest, ParsesDeleteObjects) {
  auto request = ParseDeleteRequest(
      "<?xml version=\"1.0\"?><Delete xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
      "<Object><Key>a/b.txt</Key></Object><Object><Key>c&amp;d</Key><VersionId>1</VersionId>"
      "</Object><Quiet>true</Quiet></Delete>");
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_TRUE(request->quiet);
  EXPECT_EQ(request->keys, (std::vector<std::string>{"a/b.txt", "c&d"}));

  EXPECT_EQ(S3Code(ParseDeleteRequest("<Delete><Object/></Delete>").status()), "MalformedXML");
  EXPECT_EQ(S3Code(ParseDeleteRequest("<Nope/>").status()), "MalformedXML");
  EXPECT_EQ(S3Code(ParseDeleteRequest("<Delete><Object><Key>a").status()), "MalformedXML");
  std::string many = "<Delete>";
  for (int i = 0; i < 1001; ++i) {
    many += "<Object><Key>k</Key></Object>";
  }
  EXPECT_EQ(S3Code(ParseDeleteRequest(many + "</Delete>").status()), "MalformedXML");
}

TEST(XmlTest, ParsesCompleteMultipartUpload) {
  auto parts = ParseCompleteRequest(
      "<CompleteMultipartUpload><Part><ETag>\"abc\"</ETag><PartNumber>1</PartNumber></Part>"
      "<Part><PartNumber> 2 </PartNumber><ETag>def</ETag></Part></CompleteMultipartUpload>");
  ASSERT_TRUE(parts.ok()) << parts.status();
  ASSERT_EQ(parts->size(), 2u);
  EXPECT_EQ((*parts)[0].part_number, 1);
  EXPECT_EQ((*parts)[0].etag, "abc");
  EXPECT_EQ((*parts)[1].part_number, 2);
  EXPECT_EQ((*parts)[1].etag, "def");
  EXPECT_FALSE(ParseCompleteRequest("<CompleteMultipartUpload/>").ok());
  EXPECT_FALSE(
      ParseCompleteRequest("<CompleteMultipartUpload><Part><PartNumber>x</PartNumber></Part>"
                           "</CompleteMultipartUpload>")
          .ok());
}

TEST(ErrorsTest, CarriesS3CodesAndMapsTheRest) {
  S3Error error = ToS3Error(S3Status("NoSuchUpload", "gone"));
  EXPECT_EQ(error.http_status, 404);
  EXPECT_EQ(error.code, "NoSuchUpload");
  EXPECT_EQ(error.message, "gone");
  EXPECT_EQ(ToS3Error(absl::NotFoundError("x"), "NoSuchBucket").code, "NoSuchBucket");
  EXPECT_EQ(ToS3Error(absl::ResourceExhaustedError("full")).http_status, 403);
  EXPECT_EQ(ToS3Error(absl::ResourceExhaustedError("full")).code, "QuotaExceeded");
  EXPECT_EQ(ToS3Error(absl::PermissionDeniedError("x")).code, "AccessDenied");
  // A database failover (commit outcome unknown, conflict left after retries) is retryable.
  for (const absl::Status& failover :
       {absl::UnknownError("database commit outcome unknown"), absl::AbortedError("conflict"),
        absl::UnavailableError("database unreachable")}) {
    EXPECT_EQ(ToS3Error(failover).http_status, 503) << failover;
    EXPECT_EQ(ToS3Error(failover).code, "ServiceUnavailable") << failover;
  }
  S3Error internal = ToS3Error(absl::InternalError("secret detail"));
  EXPECT_EQ(internal.http_status, 500);
  EXPECT_EQ(internal.message.find("secret"), std::string::npos);
  std::string doc = ErrorDocument(error, "/b/k<", "REQ1");
  EXPECT_NE(doc.find("<Code>NoSuchUpload</Code>"), std::string::npos);
  EXPECT_NE(doc.find("<Resource>/b/k&lt;</Resource>"), std::string::npos);
  EXPECT_NE(doc.find("<RequestId>REQ1</RequestId>"), std::string::npos);
}

}  // namespace
}  // namespace gpuaas::storage::s3
