// Spec rules without a database: the bad inputs each answer INVALID_ARGUMENT naming the
// field, and good specs parse into exact demands.
#include "services/stock/spec_rules.h"

#include <gtest/gtest.h>

#include "libs/testing/status_matchers.h"

namespace gpuaas::stock {
namespace {

using ::gpuaas::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::StartsWith;

pb::Spec A100() {
  pb::Spec s;
  s.set_spec_name("a100.1x");
  s.set_gpu_type("A100-80GB");
  s.set_gpu_num(1);
  s.set_cpu("8");
  s.set_memory("32Gi");
  s.set_disk("200Gi");
  s.mutable_price()->set_micros_per_hour(2'400'000);
  s.mutable_price()->set_currency("USD");
  s.set_description("One A100 80GB");
  return s;
}

TEST(ValidateSpec, AGoodSpecParsesExactly) {
  absl::StatusOr<SpecDemand> d = ValidateSpec("spec", A100());
  ASSERT_OK(d.status());
  EXPECT_EQ(d->cpu_millis, 8000);
  EXPECT_EQ(d->memory_bytes, int64_t{32} << 30);
  EXPECT_EQ(d->disk_bytes, int64_t{200} << 30);
}

TEST(ValidateSpec, SharesAndMigProfiles) {
  pb::Spec share = A100();
  share.set_gpu_type("T4");
  share.set_gpu_share_milli(500);
  EXPECT_OK(ValidateSpec("spec", share).status());
  pb::Spec mig = A100();
  mig.set_mig_profile("3g.40gb");
  EXPECT_OK(ValidateSpec("spec", mig).status());
}

TEST(ValidateSpec, BadQuantitiesNameTheField) {
  for (const char* bad : {"-1", "1.5Ki", "abc", "1e400", ""}) {
    pb::Spec s = A100();
    s.set_cpu(bad);
    EXPECT_THAT(ValidateSpec("spec", s).status(),
                StatusIs(absl::StatusCode::kInvalidArgument, StartsWith("spec.cpu: ")))
        << "cpu " << bad;
  }
  for (const char* bad : {"-1", "abc", "1e400", "", "500m"}) {
    pb::Spec s = A100();
    s.set_memory(bad);
    EXPECT_THAT(ValidateSpec("spec", s).status(),
                StatusIs(absl::StatusCode::kInvalidArgument, StartsWith("spec.memory: ")))
        << "memory " << bad;
    s = A100();
    s.set_disk(bad);
    EXPECT_THAT(ValidateSpec("spec", s).status(),
                StatusIs(absl::StatusCode::kInvalidArgument, StartsWith("spec.disk: ")))
        << "disk " << bad;
  }
}

TEST(ValidateSpec, GpuAsks) {
  struct Case {
    const char* what;
    void (*edit)(pb::Spec&);
    const char* field;
  };
  const Case kCases[] = {
      {"gpu_num 0 with a share",
       [](pb::Spec& s) {
         s.set_gpu_num(0);
         s.set_gpu_share_milli(500);
       },
       "spec.gpu_num: "},
      {"gpu_num 0", [](pb::Spec& s) { s.set_gpu_num(0); }, "spec.gpu_num: "},
      {"gpu_num 17", [](pb::Spec& s) { s.set_gpu_num(17); }, "spec.gpu_num: "},
      {"two GPUs with a share",
       [](pb::Spec& s) {
         s.set_gpu_num(2);
         s.set_gpu_share_milli(500);
       },
       "spec.gpu_num: "},
      {"share of 1000", [](pb::Spec& s) { s.set_gpu_share_milli(1000); }, "spec.gpu_share_milli: "},
      {"negative share", [](pb::Spec& s) { s.set_gpu_share_milli(-5); }, "spec.gpu_share_milli: "},
      {"MIG on a T4",
       [](pb::Spec& s) {
         s.set_gpu_type("T4");
         s.set_mig_profile("1g.10gb");
       },
       "spec.mig_profile: "},
      {"a profile of another model", [](pb::Spec& s) { s.set_mig_profile("1g.6gb"); },
       "spec.mig_profile: "},
      {"share and MIG",
       [](pb::Spec& s) {
         s.set_gpu_share_milli(500);
         s.set_mig_profile("1g.10gb");
       },
       "spec.mig_profile: "},
      {"unknown model", [](pb::Spec& s) { s.set_gpu_type("RTX-9090"); }, "spec.gpu_type: "},
      {"lower-case model", [](pb::Spec& s) { s.set_gpu_type("a100-80gb"); }, "spec.gpu_type: "},
      {"no model", [](pb::Spec& s) { s.set_gpu_type(""); }, "spec.gpu_type: "},
      {"bad name", [](pb::Spec& s) { s.set_spec_name("A100 x1"); }, "spec.spec_name: "},
      {"negative price", [](pb::Spec& s) { s.mutable_price()->set_micros_per_hour(-1); },
       "spec.price.micros_per_hour: "},
      {"bad currency", [](pb::Spec& s) { s.mutable_price()->set_currency("usd"); },
       "spec.price.currency: "},
      {"control characters", [](pb::Spec& s) { s.set_description("a\tb"); }, "spec.description: "},
  };
  for (const Case& c : kCases) {
    pb::Spec s = A100();
    c.edit(s);
    EXPECT_THAT(ValidateSpec("spec", s).status(),
                StatusIs(absl::StatusCode::kInvalidArgument, StartsWith(c.field)))
        << c.what;
  }
}

TEST(ValidateSpec, UnknownModelListsTheKnownOnes) {
  pb::Spec s = A100();
  s.set_gpu_type("RTX-9090");
  EXPECT_THAT(ValidateSpec("spec", s).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("A100-80GB")));
}

}  // namespace
}  // namespace gpuaas::stock
