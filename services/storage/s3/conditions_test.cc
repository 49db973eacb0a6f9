#include "services/storage/s3/conditions.h"

#include <gtest/gtest.h>

#include "services/storage/s3/errors.h"
#include "services/storage/s3/operation.h"

namespace gpuaas::storage::s3 {
namespace {

std::optional<ByteRange> Range(std::string_view header, int64_t size) {
  auto range = ParseRange(header, size);
  EXPECT_TRUE(range.ok()) << header;
  return range.ok() ? *range : std::nullopt;
}

TEST(ConditionsTest, Ranges) {
  auto r = Range("bytes=0-9", 100);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->first, 0);
  EXPECT_EQ(r->length, 10);
  r = Range("bytes=90-", 100);
  EXPECT_EQ(r->first, 90);
  EXPECT_EQ(r->length, 10);
  r = Range("bytes=-30", 100);
  EXPECT_EQ(r->first, 70);
  EXPECT_EQ(r->length, 30);
  r = Range("bytes=-300", 100);
  EXPECT_EQ(r->first, 0);
  EXPECT_EQ(r->length, 100);
  r = Range("bytes=50-500", 100);
  EXPECT_EQ(r->length, 50);
  EXPECT_FALSE(Range("", 100));
  EXPECT_FALSE(Range("bytes=0-1,5-6", 100));
  EXPECT_FALSE(Range("items=0-1", 100));
  EXPECT_FALSE(Range("bytes=5-1", 100));
  EXPECT_EQ(S3Code(ParseRange("bytes=100-", 100).status()), "InvalidRange");
  EXPECT_EQ(S3Code(ParseRange("bytes=-0", 100).status()), "InvalidRange");
  EXPECT_EQ(S3Code(ParseRange("bytes=0-", 0).status()), "InvalidRange");
}

TEST(ConditionsTest, Preconditions) {
  absl::Time modified = absl::FromUnixSeconds(1'700'000'000);
  std::string before = "Tue, 14 Nov 2023 22:13:19 GMT";  // one second earlier
  std::string at = "Tue, 14 Nov 2023 22:13:20 GMT";
  ASSERT_EQ(*ParseHttpTime(at), modified);
  auto eval = [&](ConditionalHeaders h) { return EvaluatePreconditions(h, "abc", modified); };
  EXPECT_EQ(eval({}), Precondition::kProceed);
  EXPECT_EQ(eval({.if_match = "\"abc\""}), Precondition::kProceed);
  EXPECT_EQ(eval({.if_match = "\"x\", \"abc\""}), Precondition::kProceed);
  EXPECT_EQ(eval({.if_match = "\"x\""}), Precondition::kFailed);
  EXPECT_EQ(eval({.if_match = "*"}), Precondition::kProceed);
  EXPECT_EQ(eval({.if_none_match = "\"abc\""}), Precondition::kNotModified);
  EXPECT_EQ(eval({.if_none_match = "W/\"abc\""}), Precondition::kNotModified);
  EXPECT_EQ(eval({.if_none_match = "\"x\""}), Precondition::kProceed);
  EXPECT_EQ(eval({.if_modified_since = at}), Precondition::kNotModified);
  EXPECT_EQ(eval({.if_modified_since = before}), Precondition::kProceed);
  EXPECT_EQ(eval({.if_unmodified_since = before}), Precondition::kFailed);
  EXPECT_EQ(eval({.if_unmodified_since = at}), Precondition::kProceed);
  // If-None-Match wins over If-Modified-Since.
  EXPECT_EQ(eval({.if_none_match = "\"x\"", .if_modified_since = at}), Precondition::kProceed);
}

TEST(OperationTest, Routes) {
  QueryParams none;
  auto q = [](std::initializer_list<std::pair<std::string, std::string>> params) {
    return QueryParams(params);
  };
  EXPECT_EQ(Route("GET", false, false, none, false), Operation::kListBuckets);
  EXPECT_EQ(Route("GET", true, false, none, false), Operation::kListObjects);
  EXPECT_EQ(Route("GET", true, false, q({{"list-type", "2"}}), false), Operation::kListObjectsV2);
  EXPECT_EQ(Route("GET", true, false, q({{"location", ""}}), false), Operation::kGetBucketLocation);
  EXPECT_EQ(Route("GET", true, false, q({{"uploads", ""}}), false),
            Operation::kListMultipartUploads);
  EXPECT_EQ(Route("GET", true, false, q({{"versioning", ""}}), false), Operation::kNotImplemented);
  EXPECT_EQ(Route("POST", true, false, q({{"delete", ""}}), false), Operation::kDeleteObjects);
  EXPECT_EQ(Route("HEAD", true, true, none, false), Operation::kHeadObject);
  EXPECT_EQ(Route("PUT", true, true, none, false), Operation::kPutObject);
  EXPECT_EQ(Route("PUT", true, true, none, true), Operation::kCopyObject);
  EXPECT_EQ(Route("PUT", true, true, q({{"partNumber", "1"}, {"uploadId", "u"}}), false),
            Operation::kUploadPart);
  EXPECT_EQ(Route("PUT", true, true, q({{"partNumber", "1"}, {"uploadId", "u"}}), true),
            Operation::kNotImplemented);
  EXPECT_EQ(Route("POST", true, true, q({{"uploads", ""}}), false),
            Operation::kCreateMultipartUpload);
  EXPECT_EQ(Route("POST", true, true, q({{"uploadId", "u"}}), false),
            Operation::kCompleteMultipartUpload);
  EXPECT_EQ(Route("DELETE", true, true, q({{"uploadId", "u"}}), false),
            Operation::kAbortMultipartUpload);
  EXPECT_EQ(Route("GET", true, true, q({{"uploadId", "u"}}), false), Operation::kListParts);
  EXPECT_EQ(Route("PUT", true, true, q({{"tagging", ""}}), false), Operation::kNotImplemented);
  EXPECT_EQ(Route("PATCH", true, true, none, false), Operation::kMethodNotAllowed);
}

}  // namespace
}  // namespace gpuaas::storage::s3
