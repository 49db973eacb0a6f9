#include "services/agent/agent_config.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace gpuaas::agent {
namespace {

bool ValidLabelKey(absl::string_view key) {
  if (key.empty() || key.size() > 63) {
    return false;
  }
  for (char c : key) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '/' &&
        c != '-') {
      return false;
    }
  }
  return true;
}

}  // namespace

absl::StatusOr<std::map<std::string, std::string>> ParseLabels(std::string_view text) {
  std::map<std::string, std::string> labels;
  if (text.empty()) {
    return labels;
  }
  for (absl::string_view pair : absl::StrSplit(absl::string_view(text.data(), text.size()), ',')) {
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(pair, absl::MaxSplits('=', 1));
    if (pair.find('=') == absl::string_view::npos || !ValidLabelKey(kv.first)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--labels: \"", pair, "\": want key=value, key of [A-Za-z0-9._/-], 1..63 characters"));
    }
    if (kv.second.size() > 256) {
      return absl::InvalidArgumentError(
          absl::StrCat("--labels: the value of ", kv.first, " is over 256 bytes"));
    }
    if (!labels.emplace(std::string(kv.first), std::string(kv.second)).second) {
      return absl::InvalidArgumentError(absl::StrCat("--labels: ", kv.first, " given twice"));
    }
  }
  return labels;
}

std::string JoinHostPort(std::string_view host, int port) {
  const absl::string_view h(host.data(), host.size());
  if (h.find(':') != absl::string_view::npos) return absl::StrCat("[", h, "]:", port);
  return absl::StrCat(h, ":", port);
}

}  // namespace gpuaas::agent
