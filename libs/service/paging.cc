#include "libs/service/paging.h"

#include <algorithm>

#include "libs/common/base64url.h"
#include "libs/service/validate.h"

namespace gpuaas::service {
namespace {

// Versions the token format, and makes a token from another API fail to parse.
constexpr std::string_view kTokenPrefix = "p1:";

}  // namespace

absl::StatusOr<PageRequest> ParsePage(int32_t page_size, std::string_view page_token) {
  if (page_size < 0) {
    return InvalidField("page_size", "must be >= 0");
  }
  PageRequest page;
  page.limit = page_size == 0 ? kDefaultPageSize : std::min(page_size, kMaxPageSize);
  if (page_token.empty()) {
    return page;
  }
  absl::StatusOr<std::string> decoded = Base64UrlDecode(page_token);
  if (!decoded.ok() || !decoded->starts_with(kTokenPrefix)) {
    return InvalidField("page_token", "invalid");
  }
  page.after = decoded->substr(kTokenPrefix.size());
  return page;
}

std::string NextPageToken(const PageRequest& page, size_t returned, std::string_view last_key) {
  if (returned < static_cast<size_t>(page.limit)) {
    return "";
  }
  return Base64UrlEncode(std::string(kTokenPrefix) + std::string(last_key));
}

}  // namespace gpuaas::service
