#include "services/storage/s3/served_content.h"

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"

namespace gpuaas::storage::s3 {

bool IsActiveContentType(std::string_view content_type) {
  const std::string media = absl::AsciiStrToLower(
      absl::StripAsciiWhitespace(absl::string_view(content_type.data(), content_type.size())
                                     .substr(0, content_type.find(';'))));
  constexpr std::string_view kActive[] = {
      "text/html", "application/xhtml+xml", "image/svg+xml", "text/xml", "application/xml",
      "text/xsl",  "application/xslt+xml"};
  for (std::string_view active : kActive) {
    if (media == active) {
      return true;
    }
  }
  return absl::EndsWith(media, "+xml");
}

void SetServedContentHeaders(RequestContext& ctx, std::string_view content_type) {
  ctx.res.set_header("X-Content-Type-Options", "nosniff");
  ctx.res.set_header("Content-Security-Policy", "sandbox");
  if (IsActiveContentType(content_type) && !ctx.HasParam("response-content-disposition")) {
    ctx.res.set_header("Content-Disposition", "attachment");
  }
}

}  // namespace gpuaas::storage::s3
