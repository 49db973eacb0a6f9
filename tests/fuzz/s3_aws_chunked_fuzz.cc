// aws-chunked upload bodies (STREAMING-AWS4-HMAC-SHA256-PAYLOAD with a chain of chunk
// signatures, STREAMING-UNSIGNED-PAYLOAD-TRAILER with trailers) as S3 clients stream them in
// (services/storage/s3/aws_chunked.h): no crash, no UB, and the same verdict and bytes whether
// the body arrives at once or in pieces of any size (the network decides where it is cut).
//
// Input: "signed|unsigned <decoded length> <piece size>\n" then the body. The signed chain
// starts at AWS's streaming example (its key, date, scope and seed signature).
#include "absl/strings/numbers.h"
#include "services/storage/s3/aws_chunked.h"
#include "services/storage/s3/sigv4.h"
#include "tests/fuzz/fuzz_input.h"

namespace gpuaas::storage::s3 {
namespace {

struct Decoded {
  absl::Status status;
  std::string bytes;
  std::map<std::string, std::string> trailers;
};

Decoded Decode(bool is_signed, int64_t decoded_length, std::string_view body, size_t piece) {
  Decoded out;
  AwsChunkedDecoder::Sink sink = [&out](std::string_view data) {
    out.bytes.append(data);
    return absl::OkStatus();
  };
  Credential credential{"AKIAIOSFODNN7EXAMPLE", "20130524", "us-east-1", "s3"};
  std::unique_ptr<AwsChunkedDecoder> decoder =
      is_signed ? std::make_unique<AwsChunkedDecoder>(
                      ChunkSignatureChain(
                          SigningKey("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", credential),
                          "20130524T000000Z", credential.Scope(),
                          "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9"),
                      decoded_length, sink)
                : std::make_unique<AwsChunkedDecoder>(decoded_length, sink);
  for (size_t at = 0; at < body.size() && out.status.ok(); at += piece) {
    out.status = decoder->Feed(body.substr(at, piece));
  }
  if (out.status.ok()) {
    out.status = decoder->Finish();
  }
  if (out.status.ok()) {
    out.trailers = decoder->trailers();
  }
  return out;
}

}  // namespace
}  // namespace gpuaas::storage::s3

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using gpuaas::storage::s3::Decode;
  auto parts = gpuaas::fuzz::Fields(gpuaas::fuzz::AsText(data, size), '\n', 2);
  auto settings = gpuaas::fuzz::Fields(parts[0], ' ', 3);
  int64_t decoded_length = 0;
  uint32_t piece = 0;
  if (parts.size() < 2 || settings.size() < 3 ||
      !absl::SimpleAtoi(gpuaas::fuzz::Av(settings[1]), &decoded_length) ||
      !absl::SimpleAtoi(gpuaas::fuzz::Av(settings[2]), &piece) || piece == 0) {
    return 0;
  }
  bool is_signed = settings[0] == "signed";
  std::string_view body = parts[1];
  auto whole = Decode(is_signed, decoded_length, body, body.size() + 1);
  auto pieces = Decode(is_signed, decoded_length, body, piece);
  if (whole.status.code() != pieces.status.code() ||
      (whole.status.ok() && (whole.bytes != pieces.bytes || whole.trailers != pieces.trailers))) {
    gpuaas::fuzz::Fail("the verdict or the bytes depend on where the body was cut",
                       std::string(whole.status.ToString()) + " / " + pieces.status.ToString());
  }
  if (whole.status.ok() && static_cast<int64_t>(whole.bytes.size()) != decoded_length) {
    gpuaas::fuzz::Fail("a body accepted with another length than it declared");
  }
  return 0;
}
