// The XML the S3 API speaks: a small escaping writer for responses, and parsers (pugixml) for
// the two request bodies that carry XML (DeleteObjects, CompleteMultipartUpload).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace gpuaas::storage::s3 {

inline constexpr std::string_view kS3Namespace = "http://s3.amazonaws.com/doc/2006-03-01/";

// Text escaped for element content and attribute values. Characters XML 1.0 cannot carry
// (control characters other than tab, CR, LF) become numeric references, as S3 writes them.
std::string XmlEscape(std::string_view text);

// Builds a document with the XML declaration; elements are closed in reverse order.
class XmlWriter final {
 public:
  // The root element, with the S3 namespace.
  explicit XmlWriter(std::string_view root);
  void Open(std::string_view name);
  void Close(std::string_view name);
  void Element(std::string_view name, std::string_view text);
  // Closes the root and returns the document.
  std::string Finish();

 private:
  std::string root_;
  std::string out_;
};

struct DeleteRequest {
  std::vector<std::string> keys;
  bool quiet = false;
};
// <Delete><Quiet>true</Quiet><Object><Key>k</Key></Object>...</Delete>. INVALID_ARGUMENT
// (MalformedXML) when it is not that document or names more than 1,000 keys.
absl::StatusOr<DeleteRequest> ParseDeleteRequest(std::string_view body);

struct CompletedPart {
  int part_number = 0;
  std::string etag;  // without quotes
};
// <CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>"..."</ETag></Part>...
absl::StatusOr<std::vector<CompletedPart>> ParseCompleteRequest(std::string_view body);

}  // namespace gpuaas::storage::s3
