#include "tests/proxy/upstream_workload.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "libs/testing/eventually.h"
#include "tests/proxy/http_client.h"

namespace gpuaas::proxy_testing {

namespace instancepb = ::gpuaas::instance::v1;

std::string UpstreamScript() {
  std::ifstream in(GPUAAS_PROXY_UPSTREAM_PY);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::unique_ptr<testing::ChildProcess> StartUpstream(int port, const std::filesystem::path& log) {
  auto upstream = std::make_unique<testing::ChildProcess>(
      std::vector<std::string>{"/usr/bin/python3", GPUAAS_PROXY_UPSTREAM_PY, std::to_string(port)},
      log.string());
  EXPECT_TRUE(gpuaas::testing::Eventually([&] { return HttpGet(port, "x", "/").status == 200; },
                                          absl::Seconds(20)));
  return upstream;
}

instancepb::CreateInstanceRequest UpstreamInstance(const std::string& id, const std::string& spec) {
  instancepb::CreateInstanceRequest req;
  req.set_instance_id(id);
  req.set_spec_name(spec);
  instancepb::Template* t = req.mutable_template_();
  t->set_cmd("exec python3 -c \"$UPSTREAM_PY\"");
  instancepb::Env* env = t->add_envs();
  env->set_name("UPSTREAM_PY");
  env->set_value(UpstreamScript());
  instancepb::Port* web = t->add_ports();
  web->set_port(8080);
  web->set_is_probe(true);
  instancepb::Port* pub = t->add_ports();
  pub->set_port(9090);
  pub->set_is_public(true);
  return req;
}

}  // namespace gpuaas::proxy_testing
