#include "services/instance/secret_envs.h"

#include <gtest/gtest.h>

#include "gpuaas/instance/v1/instance.pb.h"

namespace gpuaas::instance {
namespace {

namespace pb = ::gpuaas::instance::v1;

void AddEnv(pb::Template& t, const std::string& name, const std::string& value, bool secret) {
  pb::Env* e = t.add_envs();
  e->set_name(name);
  e->set_value(value);
  e->set_secret(secret);
}

TEST(HideSecretEnvs, EmptiesSecretValuesAtAnyDepth) {
  pb::ListInstancesResponse list;
  pb::Instance* i = list.add_instances();
  AddEnv(*i->mutable_template_(), "TOKEN", "hunter2", true);
  AddEnv(*i->mutable_template_(), "PLAIN", "visible", false);
  pb::ListImagesResponse images;
  AddEnv(*images.add_images()->mutable_defaults(), "KEY", "hunter3", true);
  pb::InstanceChange change;
  AddEnv(*change.mutable_instance()->mutable_template_(), "TOKEN", "hunter4", true);

  HideSecretEnvs(list);
  HideSecretEnvs(images);
  HideSecretEnvs(change);
  const pb::Template& t = list.instances(0).template_();
  EXPECT_EQ(t.envs(0).name(), "TOKEN");
  EXPECT_TRUE(t.envs(0).secret());  // that it is set, still said
  EXPECT_EQ(t.envs(0).value(), "");
  EXPECT_EQ(t.envs(1).value(), "visible");
  EXPECT_EQ(images.images(0).defaults().envs(0).value(), "");
  EXPECT_EQ(change.instance().template_().envs(0).value(), "");
}

}  // namespace
}  // namespace gpuaas::instance
