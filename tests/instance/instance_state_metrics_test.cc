// The instances' state series (services/instance/instance_state_metrics.h) against the real
// schema: counts by state, deleted instances left out, and the age of the oldest PENDING one
// counted from its last move into PENDING. What the alert GpuaasInstancesPendingTooLong reads.
#include "services/instance/instance_state_metrics.h"

#include <gtest/gtest.h>
#include <prometheus/registry.h>

#include <optional>

#include "gpuaas/instance/v1/instance.pb.h"
#include "libs/testing/pg_test.h"
#include "libs/testing/status_matchers.h"
#include "services/instance/migrations.h"

namespace gpuaas::instance {
namespace {

namespace pb = ::gpuaas::instance::v1;

// The value of `name`'s series, the one whose `label` is `value` (or the only one when `label`
// is empty); nullopt when there is none.
std::optional<double> Gauge(prometheus::Registry& registry, const std::string& name,
                            const std::string& label = "", const std::string& value = "") {
  for (const prometheus::MetricFamily& family : registry.Collect()) {
    if (family.name != name) continue;
    for (const prometheus::ClientMetric& m : family.metric) {
      if (label.empty()) return m.gauge.value;
      for (const prometheus::ClientMetric::Label& l : m.label) {
        if (l.name == label && l.value == value) return m.gauge.value;
      }
    }
  }
  return std::nullopt;
}

class InstanceStateMetricsTest : public gpuaas::testing::PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped()) return;
    ASSERT_OK_AND_ASSIGN(pool_, MakePool(2));
    ASSERT_OK(db::Migrate(*pool_, "instance", Migrations()));
  }
  void TearDown() override {
    pool_.reset();
    PgTest::TearDown();
  }
  void Exec(const std::string& sql, const std::string& id, int32_t arg = 0) {
    ASSERT_OK(pool_->RunInTransaction("test.exec", [&](db::Tx& tx) {
      if (arg == 0) {
        tx.Exec(sql, id);
      } else {
        tx.Exec(sql, id, arg);
      }
      return absl::OkStatus();
    }));
  }
  void Insert(const std::string& id, pb::State state) {
    Exec(
        "INSERT INTO instance.instances (instance_id, tenant_id, spec_name, gpu_num, template, "
        "request_hash, desired_state, state) VALUES ($1, 'alpha', 's', 1, '', 'h', 1, $2)",
        id, state);
  }
  // The instance entered its current state `seconds` ago, as its events say.
  void Backdate(const std::string& id, int32_t seconds) {
    Exec(
        "UPDATE instance.events SET time = now() - make_interval(secs => $2) "
        "WHERE instance_id = $1",
        id, seconds);
  }

  std::unique_ptr<db::Pool> pool_;
};

TEST_F(InstanceStateMetricsTest, CountsLiveInstancesByStateAndAgesTheOldestPending) {
  prometheus::Registry registry;
  InstanceStateMetrics metrics(*pool_, registry);
  ASSERT_OK(metrics.Refresh());
  EXPECT_EQ(Gauge(registry, "gpuaas_instance_instances", "state", "PENDING"), 0);
  EXPECT_EQ(Gauge(registry, "gpuaas_instance_oldest_pending_age_seconds"), 0);

  Insert("new", pb::STATE_PENDING);
  Insert("queued", pb::STATE_PENDING);
  Insert("web", pb::STATE_RUNNING);
  Insert("gone", pb::STATE_RUNNING);
  Exec("UPDATE instance.instances SET delete_time = now() WHERE instance_id = $1", "gone");
  Backdate("queued", 90);
  ASSERT_OK(metrics.Refresh());
  EXPECT_EQ(Gauge(registry, "gpuaas_instance_instances", "state", "PENDING"), 2);
  EXPECT_EQ(Gauge(registry, "gpuaas_instance_instances", "state", "RUNNING"), 1);
  EXPECT_EQ(Gauge(registry, "gpuaas_instance_instances", "state", "FAILED"), 0);
  EXPECT_GE(*Gauge(registry, "gpuaas_instance_oldest_pending_age_seconds"), 90);

  // A RUNNING instance that waited long before counts no more; a new wait starts from zero.
  Exec("UPDATE instance.instances SET state = $2 WHERE instance_id = $1", "queued",
       pb::STATE_RUNNING);
  ASSERT_OK(metrics.Refresh());
  EXPECT_EQ(Gauge(registry, "gpuaas_instance_instances", "state", "PENDING"), 1);
  EXPECT_LT(*Gauge(registry, "gpuaas_instance_oldest_pending_age_seconds"), 60);
}

}  // namespace
}  // namespace gpuaas::instance
