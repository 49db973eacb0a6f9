// Host headers as anyone sends them to the access proxy (services/proxy/access_host.h): no
// crash, no UB, and each instance port has exactly one host name, so a cookie or a grant for one
// never fits another: what is accepted is "<id>-<port>.<domain>" spelled the one canonical way.
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "services/proxy/access_host.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using ::gpuaas::fuzz::Fail;
  std::string_view host = gpuaas::fuzz::AsText(data, size);
  std::string without_port = gpuaas::proxy::HostWithoutPort(host);
  auto access = gpuaas::proxy::ParseAccessHost(host, "gpuaas.localhost");
  if (!access) {
    return 0;
  }
  if (access->port < 1 || access->port > 65535 || access->instance_id.empty()) {
    Fail("an accepted host with no instance or a port outside 1..65535", host);
  }
  std::string canonical = absl::StrCat(access->instance_id, "-", access->port, ".gpuaas.localhost");
  if (absl::StripSuffix(without_port, ".") != canonical) {
    Fail("an instance port answers to a second host name", host);
  }
  return 0;
}
