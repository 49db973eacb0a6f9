// Paging for List methods (AIP-158): page_size and an opaque page_token in, a page of rows and
// next_page_token out. Rows are ordered by one unique text key; the token carries the last key
// of the page, so a page costs an index range scan whatever its depth.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "google/protobuf/repeated_ptr_field.h"

namespace gpuaas::service {

inline constexpr int kDefaultPageSize = 50;
inline constexpr int kMaxPageSize = 500;

// What a repository needs to read one page: keys greater than `after`, at most `limit` rows.
struct PageRequest {
  std::string after;
  int limit = kDefaultPageSize;
};

// page_size 0 means 50, larger than 500 means 500. Errors: INVALID_ARGUMENT "page_size: ..."
// for a negative size, "page_token: invalid" for a token we did not issue.
absl::StatusOr<PageRequest> ParsePage(int32_t page_size, std::string_view page_token);

// The token for the page after one that ended at `last_key`; empty when the page was short
// (there is no next page).
std::string NextPageToken(const PageRequest& page, size_t returned, std::string_view last_key);

// Moves `rows` into `out` and sets `next_page_token`; `key(row)` is the row's ordering key.
template <typename Item, typename KeyFn>
void FillPage(const PageRequest& page, std::vector<Item> rows,
              google::protobuf::RepeatedPtrField<Item>& out, std::string& next_page_token,
              KeyFn key) {
  out.Clear();
  next_page_token.clear();
  if (rows.empty()) {
    return;
  }
  next_page_token = NextPageToken(page, rows.size(), key(rows.back()));
  for (Item& row : rows) {
    *out.Add() = std::move(row);
  }
}

}  // namespace gpuaas::service
