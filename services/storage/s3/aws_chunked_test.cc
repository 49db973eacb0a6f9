#include "services/storage/s3/aws_chunked.h"

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "services/storage/s3/sigv4.h"

namespace gpuaas::storage::s3 {
namespace {

constexpr std::string_view kSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
const Credential kCredential{"AKIAIOSFODNN7EXAMPLE", "20130524", "us-east-1", "s3"};
constexpr std::string_view kDate = "20130524T000000Z";
constexpr std::string_view kSeed =
    "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9";

ChunkSignatureChain Chain() {
  return ChunkSignatureChain(SigningKey(kSecret, kCredential), std::string(kDate),
                             kCredential.Scope(), std::string(kSeed));
}

// Frames `chunks` (the last one should be empty) with a correct signature chain.
std::string Encode(const std::vector<std::string>& chunks) {
  std::string key = SigningKey(kSecret, kCredential);
  std::string previous(kSeed);
  std::string body;
  for (const auto& chunk : chunks) {
    previous = Sign(key, ChunkStringToSign(kDate, kCredential.Scope(), previous, Sha256Hex(chunk)));
    absl::StrAppendFormat(&body, "%x;chunk-signature=%s\r\n%s\r\n", chunk.size(), previous, chunk);
  }
  return body;
}

struct Decoded {
  absl::Status status;
  std::string data;
};

// Feeds `body` in pieces cut at `cuts` (ascending offsets).
Decoded Decode(std::string_view body, int64_t length, const std::vector<size_t>& cuts) {
  Decoded out;
  AwsChunkedDecoder decoder(Chain(), length, [&out](std::string_view data) {
    out.data.append(data);
    return absl::OkStatus();
  });
  size_t begin = 0;
  std::vector<size_t> ends = cuts;
  ends.push_back(body.size());
  for (size_t end : ends) {
    out.status = decoder.Feed(body.substr(begin, end - begin));
    if (!out.status.ok()) {
      return out;
    }
    begin = end;
  }
  out.status = decoder.Finish();
  return out;
}

TEST(AwsChunkedTest, DecodesTheAwsExampleWithItsPublishedSignatures) {
  std::string body =
      absl::StrCat("10000;chunk-signature=",
                   "ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648\r\n",
                   std::string(65536, 'a'), "\r\n400;chunk-signature=",
                   "0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497\r\n",
                   std::string(1024, 'a'), "\r\n0;chunk-signature=",
                   "b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9\r\n\r\n");
  ASSERT_EQ(body.size(), 66824u);  // the example's Content-Length
  EXPECT_EQ(body, Encode({std::string(65536, 'a'), std::string(1024, 'a'), ""}));
  Decoded whole = Decode(body, 66560, {});
  ASSERT_TRUE(whole.status.ok()) << whole.status;
  EXPECT_EQ(whole.data, std::string(66560, 'a'));

  std::vector<size_t> every_byte;
  for (size_t i = 1; i < body.size(); ++i) {
    every_byte.push_back(i);
  }
  Decoded bytewise = Decode(body, 66560, every_byte);
  ASSERT_TRUE(bytewise.status.ok()) << bytewise.status;
  EXPECT_EQ(bytewise.data, whole.data);
}

TEST(AwsChunkedTest, SplitAtEveryByteBoundary) {
  std::vector<std::string> chunks = {"hello world", "\r\n0;x", "!", ""};
  std::string body = Encode(chunks);
  std::string expected = "hello world\r\n0;x!";
  for (size_t cut = 0; cut <= body.size(); ++cut) {
    for (size_t second = cut; second <= body.size(); second += 7) {
      Decoded out = Decode(body, static_cast<int64_t>(expected.size()), {cut, second});
      ASSERT_TRUE(out.status.ok()) << "cuts " << cut << "," << second << ": " << out.status;
      ASSERT_EQ(out.data, expected);
    }
  }
}

TEST(AwsChunkedTest, RefusesATamperedChunk) {
  std::string body = Encode({"payload-one", "payload-two", ""});
  std::string tampered = body;
  tampered[tampered.find("payload-two")] = 'P';
  Decoded out = Decode(tampered, 22, {});
  EXPECT_EQ(out.status.code(), absl::StatusCode::kPermissionDenied);

  // A valid chain whose final chunk signs something else.
  std::string wrong_final = body;
  size_t last_sig = wrong_final.rfind("chunk-signature=") + 16;
  wrong_final[last_sig] = wrong_final[last_sig] == '0' ? '1' : '0';
  EXPECT_EQ(Decode(wrong_final, 22, {}).status.code(), absl::StatusCode::kPermissionDenied);
}

TEST(AwsChunkedTest, RefusesBodiesCutShortOrTooLong) {
  std::string body = Encode({"0123456789", ""});
  EXPECT_EQ(Decode(body.substr(0, body.size() - 2), 10, {}).status.code(),
            absl::StatusCode::kInvalidArgument)
      << "missing the final CRLF";
  std::string no_final = Encode({"0123456789"});
  EXPECT_FALSE(Decode(no_final, 10, {}).status.ok()) << "no final chunk";
  EXPECT_FALSE(Decode(body, 9, {}).status.ok()) << "more than the decoded length";
  EXPECT_FALSE(Decode(body, 11, {}).status.ok()) << "less than the decoded length";
  EXPECT_FALSE(Decode(body + "x", 10, {}).status.ok()) << "data after the final chunk";
}

TEST(AwsChunkedTest, RefusesMalformedFraming) {
  std::string sig(64, 'a');
  for (std::string body : {
           absl::StrCat("zz;chunk-signature=", sig, "\r\n"),
           absl::StrCat("5;chunk-signature=", sig, "\n"),
           absl::StrCat("5\r\nhello\r\n"),
           absl::StrCat("5;chunk-signature=abc\r\n"),
           std::string(200, '1'),
       }) {
    EXPECT_EQ(Decode(body, 5, {}).status.code(), absl::StatusCode::kInvalidArgument) << body;
  }
}

// Found by tests/fuzz (s3_aws_chunked): sixteen hex digits overflowed the int64 chunk size
// (undefined behaviour; "ffffffffffffffff" came out as -1, a chunk that shrank the count).
TEST(AwsChunkedTest, RefusesChunkSizesPastInt64) {
  for (std::string size : {"ffffffffffffffff", "8000000000000000", "7fffffffffffffff"}) {
    AwsChunkedDecoder decoder(5, [](std::string_view) { return absl::OkStatus(); });
    EXPECT_EQ(decoder.Feed(size + "\r\n\r\n").code(), absl::StatusCode::kInvalidArgument) << size;
    EXPECT_EQ(Decode(absl::StrCat(size, ";chunk-signature=", std::string(64, 'a'), "\r\n"), 5, {})
                  .status.code(),
              absl::StatusCode::kInvalidArgument)
        << size;
  }
}

TEST(AwsChunkedUnsignedTest, DecodesChunksAndTrailersSplitAnywhere) {
  std::string body =
      "5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\n"
      "x-amz-checksum-crc32:DUoRhQ==\r\nX-Other: v\r\n\r\n";
  for (size_t cut = 0; cut <= body.size(); ++cut) {
    std::string out;
    AwsChunkedDecoder decoder(11, [&out](std::string_view data) {
      out.append(data);
      return absl::OkStatus();
    });
    ASSERT_TRUE(decoder.Feed(std::string_view(body).substr(0, cut)).ok()) << cut;
    ASSERT_TRUE(decoder.Feed(std::string_view(body).substr(cut)).ok()) << cut;
    ASSERT_TRUE(decoder.Finish().ok()) << cut;
    EXPECT_EQ(out, "hello world");
    EXPECT_EQ(decoder.trailers().at("x-amz-checksum-crc32"), "DUoRhQ==");
    EXPECT_EQ(decoder.trailers().at("x-other"), "v");
  }
  AwsChunkedDecoder cut_short(11, [](std::string_view) { return absl::OkStatus(); });
  ASSERT_TRUE(cut_short.Feed("5\r\nhello\r\n6\r\n world\r\n0\r\n").ok());
  EXPECT_FALSE(cut_short.Finish().ok());
  // Signed bodies take no trailers.
  std::string signed_body = Encode({"abc", ""});
  signed_body.insert(signed_body.size() - 2, "x-amz-checksum-crc32:AAAAAA==\r\n");
  EXPECT_FALSE(Decode(signed_body, 3, {}).status.ok());
}

}  // namespace
}  // namespace gpuaas::storage::s3
