#include "services/storage/s3/xml.h"

#include <pugixml.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "services/storage/s3/errors.h"
#include "services/storage/s3/internal/views.h"

namespace gpuaas::storage::s3 {
namespace {

constexpr size_t kMaxDeleteKeys = 1000;

absl::Status MalformedXml(std::string_view why) { return S3Status("MalformedXML", why); }

absl::StatusOr<pugi::xml_node> ParseRoot(pugi::xml_document& doc, std::string_view body,
                                         const char* root_name) {
  pugi::xml_parse_result result =
      doc.load_buffer(body.data(), body.size(), pugi::parse_default, pugi::encoding_utf8);
  if (!result) {
    return MalformedXml(result.description());
  }
  pugi::xml_node root = doc.document_element();
  if (std::string_view(root.name()) != root_name) {
    return MalformedXml(std::string("the root element must be ") + root_name);
  }
  return root;
}

std::string_view Unquote(std::string_view etag) {
  etag = Sv(absl::StripAsciiWhitespace(Av(etag)));
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') {
    etag = etag.substr(1, etag.size() - 2);
  }
  return etag;
}

}  // namespace

std::string XmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
          absl::StrAppendFormat(&out, "&#x%X;", c);
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  return out;
}

XmlWriter::XmlWriter(std::string_view root) : root_(root) {
  out_ = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<" + root_ + " xmlns=\"" +
         std::string(kS3Namespace) + "\">";
}

void XmlWriter::Open(std::string_view name) {
  out_ += '<';
  out_ += name;
  out_ += '>';
}

void XmlWriter::Close(std::string_view name) {
  out_ += "</";
  out_ += name;
  out_ += '>';
}

void XmlWriter::Element(std::string_view name, std::string_view text) {
  Open(name);
  out_ += XmlEscape(text);
  Close(name);
}

std::string XmlWriter::Finish() {
  Close(root_);
  return std::move(out_);
}

absl::StatusOr<DeleteRequest> ParseDeleteRequest(std::string_view body) {
  pugi::xml_document doc;
  auto root = ParseRoot(doc, body, "Delete");
  if (!root.ok()) {
    return root.status();
  }
  DeleteRequest request;
  std::string quiet = absl::AsciiStrToLower(root->child("Quiet").text().as_string());
  request.quiet = quiet == "true";
  for (pugi::xml_node object : root->children("Object")) {
    pugi::xml_node key = object.child("Key");
    if (!key) {
      return MalformedXml("an Object without a Key");
    }
    request.keys.emplace_back(key.text().as_string());
    if (request.keys.size() > kMaxDeleteKeys) {
      return MalformedXml("more than 1000 keys");
    }
  }
  if (request.keys.empty()) {
    return MalformedXml("no Object to delete");
  }
  return request;
}

absl::StatusOr<std::vector<CompletedPart>> ParseCompleteRequest(std::string_view body) {
  pugi::xml_document doc;
  auto root = ParseRoot(doc, body, "CompleteMultipartUpload");
  if (!root.ok()) {
    return root.status();
  }
  std::vector<CompletedPart> parts;
  for (pugi::xml_node part : root->children("Part")) {
    CompletedPart completed;
    absl::string_view number = absl::StripAsciiWhitespace(part.child("PartNumber").text().get());
    if (!absl::SimpleAtoi(number, &completed.part_number)) {
      return MalformedXml("a Part without a numeric PartNumber");
    }
    completed.etag = std::string(Unquote(part.child("ETag").text().get()));
    parts.push_back(std::move(completed));
  }
  if (parts.empty()) {
    return MalformedXml("no Part");
  }
  return parts;
}

}  // namespace gpuaas::storage::s3
