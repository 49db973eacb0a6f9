// Image configs as a registry serves them (services/agent/images/image_record.h): the agent
// reads a workload's environment, command and ports from them. No crash, no UB, and only real
// TCP ports come out.
#include "services/agent/images/image_record.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(gpuaas::fuzz::AsText(data, size));
  auto config = gpuaas::agent::ParseImageConfig(text);
  if (!config.ok()) {
    return 0;
  }
  for (int port : config->exposed_ports) {
    if (port < 1 || port > 65535) {
      gpuaas::fuzz::Fail("an exposed port outside 1..65535");
    }
  }
  return 0;
}
