// k8s quantities (libs/common/quantity.h) as every API's cpu, memory and disk fields take them
// from clients: no crash, no UB, and what parses formats back to the same value.
#include <cstring>

#include "libs/common/quantity.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

using ::gpuaas::fuzz::AsText;
using ::gpuaas::fuzz::Fail;

void CheckCpu(std::string_view text) {
  absl::StatusOr<int64_t> millis = gpuaas::ParseCpuMillis("cpu", text);
  if (!millis.ok()) {
    return;
  }
  if (*millis <= 0 || *millis > gpuaas::kMaxCpuCores * 1000) {
    Fail("ParseCpuMillis accepted a value out of range", text);
  }
  absl::StatusOr<int64_t> again = gpuaas::ParseCpuMillis("cpu", gpuaas::FormatCpuMillis(*millis));
  if (!again.ok() || *again != *millis) {
    Fail("FormatCpuMillis does not parse back", text);
  }
}

void CheckBytes(std::string_view text) {
  absl::StatusOr<int64_t> bytes = gpuaas::ParseBytes("memory", text);
  if (!bytes.ok()) {
    return;
  }
  if (*bytes <= 0) {
    Fail("ParseBytes accepted a non-positive value", text);
  }
  absl::StatusOr<int64_t> again = gpuaas::ParseBytes("memory", gpuaas::FormatBytes(*bytes));
  if (!again.ok() || *again != *bytes) {
    Fail("FormatBytes does not parse back", text);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = AsText(data, size);
  CheckCpu(text);
  CheckBytes(text);
  // Any int64 formats, and the positive ones parse back.
  if (size >= sizeof(int64_t)) {
    int64_t value;
    std::memcpy(&value, data, sizeof(value));
    std::string formatted = gpuaas::FormatBytes(value);
    std::string cpu = gpuaas::FormatCpuMillis(value);
    if (value > 0) {
      CheckBytes(formatted);
      if (value <= gpuaas::kMaxCpuCores * 1000) {
        CheckCpu(cpu);
      }
    }
  }
  return 0;
}
