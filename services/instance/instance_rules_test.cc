// Bad instances and templates are INVALID_ARGUMENT naming the field; an image fills a
// template's gaps.
#include "services/instance/instance_rules.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>

namespace gpuaas::instance {
namespace {

using ::testing::StartsWith;

pb::CreateInstanceRequest Good() {
  pb::CreateInstanceRequest r;
  r.set_instance_id("web-1");
  r.set_spec_name("a100.1x");
  r.set_storage_id("data");
  pb::Template* t = r.mutable_template_();
  t->set_cmd("exec python3 -m http.server \"$GPUAAS_PORT_8080\"");
  t->add_ports()->set_port(8080);
  t->mutable_ports(0)->set_is_probe(true);
  pb::Env* e = t->add_envs();
  e->set_name("MODE");
  e->set_value("dev");
  pb::Volume* v = t->add_volumes();
  v->set_name("data");
  v->set_mount_path("/data");
  return r;
}

std::string Check(const pb::CreateInstanceRequest& r) {
  absl::Status s = ValidateCreate(r, r.template_());
  if (s.ok()) return "ok";
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  return std::string(s.message());
}

TEST(InstanceRulesTest, AGoodRequestPasses) { EXPECT_EQ(Check(Good()), "ok"); }

TEST(InstanceRulesTest, BadTemplatesNameTheirField) {
  struct Case {
    std::string field;
    std::function<void(pb::CreateInstanceRequest&)> spoil;
  };
  const std::vector<Case> cases = {
      {"instance_id", [](auto& r) { r.set_instance_id("Web_1"); }},
      {"instance_id", [](auto& r) { r.set_instance_id("1web"); }},
      {"spec_name", [](auto& r) { r.clear_spec_name(); }},
      {"template.ports[0].port",
       [](auto& r) { r.mutable_template_()->mutable_ports(0)->set_port(0); }},
      {"template.ports[0].port",
       [](auto& r) { r.mutable_template_()->mutable_ports(0)->set_port(70000); }},
      {"template.ports[1].port",
       [](auto& r) { r.mutable_template_()->add_ports()->set_port(8080); }},
      {"template.ports[1].is_probe",
       [](auto& r) {
         pb::Port* p = r.mutable_template_()->add_ports();
         p->set_port(9090);
         p->set_is_probe(true);
       }},
      {"template.envs[0].name",
       [](auto& r) { r.mutable_template_()->mutable_envs(0)->set_name("1X"); }},
      {"template.envs[0].name",
       [](auto& r) { r.mutable_template_()->mutable_envs(0)->set_name("MY-VAR"); }},
      {"template.envs[0].name",
       [](auto& r) { r.mutable_template_()->mutable_envs(0)->set_name("GPUAAS_PORT_1"); }},
      {"template.envs[0].name",
       [](auto& r) { r.mutable_template_()->mutable_envs(0)->set_name("CUDA_VISIBLE_DEVICES"); }},
      {"template.volumes[0].mount_path",
       [](auto& r) { r.mutable_template_()->mutable_volumes(0)->set_mount_path("data"); }},
      {"template.volumes[0].mount_path",
       [](auto& r) { r.mutable_template_()->mutable_volumes(0)->set_mount_path("/data/../etc"); }},
      {"template.volumes[0].mount_path",
       [](auto& r) { r.mutable_template_()->mutable_volumes(0)->set_mount_path("/proc/x"); }},
      {"template.volumes[0].sub_path",
       [](auto& r) { r.mutable_template_()->mutable_volumes(0)->set_sub_path("../other"); }},
      {"template.volumes[0].sub_path",
       [](auto& r) { r.mutable_template_()->mutable_volumes(0)->set_sub_path("/abs"); }},
      {"template.cmd", [](auto& r) { r.mutable_template_()->set_cmd(std::string(1 << 20, 'x')); }},
      {"template.cmd", [](auto& r) { r.mutable_template_()->clear_cmd(); }},
      {"template.envs",
       [](auto& r) {
         for (int i = 0; i < 9; ++i) {
           pb::Env* e = r.mutable_template_()->add_envs();
           e->set_name("BIG_" + std::to_string(i));
           e->set_value(std::string(32 << 10, 'x'));
         }
       }},
      {"storage_id", [](auto& r) { r.clear_storage_id(); }},
      {"idle_timeout", [](auto& r) { r.mutable_idle_timeout()->set_seconds(10); }},
      {"template.probe_timeout",
       [](auto& r) { r.mutable_template_()->mutable_probe_timeout()->set_seconds(7200); }},
      {"template.ports[0].base_url",
       [](auto& r) { r.mutable_template_()->mutable_ports(0)->set_base_url("lab"); }},
  };
  for (const Case& c : cases) {
    pb::CreateInstanceRequest r = Good();
    c.spoil(r);
    EXPECT_THAT(Check(r), StartsWith(c.field + ":")) << c.field;
  }
}

TEST(InstanceRulesTest, AnImageFillsTheGapsAndTheRequestWins) {
  pb::Image image;
  image.set_name("jupyter");
  image.set_version("1");
  image.set_command("jupyter server");
  image.mutable_defaults()->add_ports()->set_port(8888);
  pb::Env* e = image.mutable_defaults()->add_envs();
  e->set_name("MODE");
  e->set_value("image");
  pb::Env* keep = image.mutable_defaults()->add_envs();
  keep->set_name("KEEP");
  keep->set_value("1");
  image.mutable_defaults()->mutable_probe_timeout()->set_seconds(600);
  ASSERT_TRUE(ValidateImage(image).ok());

  pb::Template requested;
  pb::Env* mine = requested.add_envs();
  mine->set_name("MODE");
  mine->set_value("mine");
  const pb::Template t = ApplyImage(image, requested);
  EXPECT_EQ(t.cmd(), "jupyter server");
  ASSERT_EQ(t.ports_size(), 1);
  EXPECT_EQ(t.ports(0).port(), 8888);
  ASSERT_EQ(t.envs_size(), 2);
  EXPECT_EQ(t.envs(0).name(), "KEEP");
  EXPECT_EQ(t.envs(1).value(), "mine");
  EXPECT_EQ(t.probe_timeout().seconds(), 600);
  EXPECT_EQ(SplitImageRef("jupyter:1").second, "1");
  EXPECT_EQ(SplitImageRef("jupyter").second, "");
}

}  // namespace
}  // namespace gpuaas::instance
