#include "services/agent/fault_file.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace gpuaas::agent {
namespace {

// The index of the GPU `ref` names (UUID or index), or -1.
int FindGpu(absl::string_view ref, const std::vector<GpuInfo>& gpus) {
  int index = -1;
  if (absl::SimpleAtoi(ref, &index)) {
    return index >= 0 && index < static_cast<int>(gpus.size()) ? index : -1;
  }
  for (const GpuInfo& g : gpus) {
    if (g.uuid == ref) {
      return g.index;
    }
  }
  return -1;
}

}  // namespace

ParsedFaults ParseFaults(std::string_view text, const std::vector<GpuInfo>& gpus) {
  ParsedFaults out;
  int number = 0;
  for (absl::string_view line : absl::StrSplit(absl::string_view(text.data(), text.size()), '\n')) {
    ++number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') {
      continue;
    }
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipWhitespace());
    int32_t xid = 0;
    if (fields.size() != 2 || !absl::SimpleAtoi(fields[1], &xid) || xid <= 0) {
      out.errors.push_back(absl::StrCat("line ", number, ": want \"<gpu uuid or index> <xid>\""));
      continue;
    }
    const int index = FindGpu(fields[0], gpus);
    if (index < 0) {
      out.errors.push_back(absl::StrCat("line ", number, ": no GPU \"", fields[0], "\""));
      continue;
    }
    out.faults.push_back({index, xid});
  }
  return out;
}

ParsedUtilization ParseUtilization(std::string_view text, const std::vector<GpuInfo>& gpus) {
  ParsedUtilization out;
  int number = 0;
  for (absl::string_view line : absl::StrSplit(absl::string_view(text.data(), text.size()), '\n')) {
    ++number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') {
      continue;
    }
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipWhitespace());
    double percent = 0;
    if (fields.size() != 2 || !absl::SimpleAtod(fields[1], &percent) || percent < 0 ||
        percent > 100) {
      out.errors.push_back(absl::StrCat("line ", number, ": want \"<gpu uuid or index> <0-100>\""));
      continue;
    }
    const int index = FindGpu(fields[0], gpus);
    if (index < 0) {
      out.errors.push_back(absl::StrCat("line ", number, ": no GPU \"", fields[0], "\""));
      continue;
    }
    out.pinned.emplace_back(index, percent);
  }
  return out;
}

}  // namespace gpuaas::agent
