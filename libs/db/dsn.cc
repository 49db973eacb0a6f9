#include "libs/db/dsn.h"

#include <libpq-fe.h>

#include <cctype>
#include <memory>

#include "absl/strings/str_cat.h"

namespace gpuaas::db {
namespace {

bool IsUri(std::string_view dsn) {
  return dsn.starts_with("postgresql://") || dsn.starts_with("postgres://");
}

std::string UriEncode(std::string_view value) {
  std::string out;
  for (unsigned char c : value) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      absl::StrAppend(&out, "%", absl::Hex(c, absl::kZeroPad2));
    }
  }
  return out;
}

std::string QuoteKeyValue(std::string_view value) {
  std::string out = "'";
  for (char c : value) {
    if (c == '\'' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  out.push_back('\'');
  return out;
}

}  // namespace

std::string WithDsnParam(std::string_view dsn, std::string_view key, std::string_view value) {
  if (IsUri(dsn)) {
    const char* sep = dsn.find('?') == std::string_view::npos ? "?" : "&";
    return std::string(dsn) + sep + std::string(key) + "=" + UriEncode(value);
  }
  return std::string(dsn) + (dsn.empty() ? "" : " ") + std::string(key) + "=" +
         QuoteKeyValue(value);
}

bool DsnHasParam(std::string_view dsn, std::string_view key) {
  return DsnParam(dsn, key).has_value();
}

std::optional<std::string> DsnParam(std::string_view dsn, std::string_view key) {
  // libpq's own parser, so quoting and URI escapes are read exactly as connecting would.
  char* err = nullptr;
  std::unique_ptr<PQconninfoOption, decltype(&PQconninfoFree)> opts(
      PQconninfoParse(std::string(dsn).c_str(), &err), &PQconninfoFree);
  if (err != nullptr) PQfreemem(err);
  if (opts == nullptr) return std::nullopt;
  for (PQconninfoOption* o = opts.get(); o->keyword != nullptr; ++o) {
    if (key == o->keyword) {
      if (o->val == nullptr) return std::nullopt;
      return std::string(o->val);
    }
  }
  return std::nullopt;
}

}  // namespace gpuaas::db
