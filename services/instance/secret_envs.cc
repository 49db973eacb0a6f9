#include "services/instance/secret_envs.h"

#include <vector>

#include "gpuaas/instance/v1/instance.pb.h"

namespace gpuaas::instance {

void HideSecretEnvs(google::protobuf::Message& m) {
  if (m.GetDescriptor() == v1::Env::descriptor()) {
    auto& env = static_cast<v1::Env&>(m);
    if (env.secret()) env.clear_value();
    return;
  }
  const google::protobuf::Reflection& r = *m.GetReflection();
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  r.ListFields(m, &fields);
  for (const google::protobuf::FieldDescriptor* f : fields) {
    if (f->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE) continue;
    if (f->is_repeated()) {
      for (int i = 0; i < r.FieldSize(m, f); ++i)
        HideSecretEnvs(*r.MutableRepeatedMessage(&m, f, i));
    } else {
      HideSecretEnvs(*r.MutableMessage(&m, f));
    }
  }
}

}  // namespace gpuaas::instance
