// States are the proto enums' numbers (see repository_reconcile.cc's header).
#include "services/instance/repository_instances.h"

#include "absl/strings/str_split.h"
#include "libs/common/proto_time.h"
#include "libs/db/rows.h"

namespace gpuaas::instance::repo {
namespace {

// clang-format off
// An instance row's columns as InstanceFromRow reads them.
#define GPUAAS_INSTANCE_COLUMNS                                                                  \
  "instance_id, tenant_id, name, spec_name, gpu_num, image, storage_id, template, "              \
  "idle_timeout_s, max_run_time_s, desired_state, state, reason, message, exit_code, node_id, "  \
  "array_to_string(gpu_uuids, ','), mig_partition, ports, revision, "                            \
  GPUAAS_SQL_MICROS("create_time") ", " GPUAAS_SQL_MICROS("update_time") ", "                    \
  GPUAAS_SQL_MICROS("start_time") ", " GPUAAS_SQL_MICROS("stop_time") ", "                       \
  "delete_time IS NOT NULL, request_hash, storage_uid, image_reference"
#define GPUAAS_INSTANCE_FROM "SELECT " GPUAAS_INSTANCE_COLUMNS " FROM instance.instances "

// A usage record clipped to [$a, $b): its seconds inside, and their price.
#define GPUAAS_USAGE_CLIPPED                                                                     \
  "greatest(0, floor(extract(epoch from least(coalesce(end_time, clock_timestamp()), "           \
  GPUAAS_SQL_FROM_MICROS("$4") ") - greatest(start_time, " GPUAAS_SQL_FROM_MICROS("$3") "))))::int8"
// clang-format on

google::protobuf::Duration Seconds(int64_t s) {
  google::protobuf::Duration d;
  d.set_seconds(s);
  return d;
}

InstanceRow InstanceFromRow(const db::Row& r) {
  InstanceRow row;
  pb::Instance& i = row.instance;
  i.set_instance_id(r.Get<std::string>(0));
  i.set_tenant_id(r.Get<std::string>(1));
  i.set_name(r.Get<std::string>(2));
  i.set_spec_name(r.Get<std::string>(3));
  i.set_gpu_num(r.Get<int32_t>(4));
  i.set_image(r.Get<std::string>(5));
  i.set_storage_id(r.Get<std::string>(6));
  (void)i.mutable_template_()->ParseFromString(r.GetBytes(7));
  if (const int64_t s = r.Get<int64_t>(8); s > 0) *i.mutable_idle_timeout() = Seconds(s);
  if (const int64_t s = r.Get<int64_t>(9); s > 0) *i.mutable_max_run_time() = Seconds(s);
  i.set_desired_state(r.GetEnum<pb::DesiredState>(10));
  i.set_state(r.GetEnum<pb::State>(11));
  i.set_reason(r.GetEnum<pb::Reason>(12));
  i.set_message(r.Get<std::string>(13));
  i.set_exit_code(r.Get<int32_t>(14));
  i.set_node_id(r.Get<std::string>(15));
  for (absl::string_view uuid : absl::StrSplit(r.Get<std::string>(16), ',', absl::SkipEmpty())) {
    i.add_gpu_uuids(std::string(uuid));
  }
  i.set_mig_partition(r.Get<std::string>(17));
  pb::Instance ports;
  if (ports.ParseFromString(r.GetBytes(18))) *i.mutable_ports() = ports.ports();
  i.set_revision(r.Get<int64_t>(19));
  *i.mutable_create_time() = ToProtoTime(r.GetTime(20));
  *i.mutable_update_time() = ToProtoTime(r.GetTime(21));
  if (auto t = r.GetOptionalTime(22)) *i.mutable_start_time() = ToProtoTime(*t);
  if (auto t = r.GetOptionalTime(23)) *i.mutable_stop_time() = ToProtoTime(*t);
  row.deleted = r.Get<bool>(24);
  row.request_hash = r.Get<std::string>(25);
  i.set_storage_uid(r.Get<std::string>(26));
  i.set_image_reference(r.Get<std::string>(27));
  return row;
}

}  // namespace

std::optional<InstanceRow> GetInstance(db::Tx& tx, const std::string& instance_id) {
  constexpr std::string_view kGet = GPUAAS_INSTANCE_FROM "WHERE instance_id = $1";
  std::optional<db::Row> row = tx.Exec(kGet, instance_id).First();
  if (!row) return std::nullopt;
  return InstanceFromRow(*row);
}

std::optional<InstanceRow> LockInstance(db::Tx& tx, const std::string& instance_id) {
  constexpr std::string_view kLock = GPUAAS_INSTANCE_FROM "WHERE instance_id = $1 FOR UPDATE";
  std::optional<db::Row> row = tx.Exec(kLock, instance_id).First();
  if (!row) return std::nullopt;
  return InstanceFromRow(*row);
}

InstanceRow InsertInstance(db::Tx& tx, const pb::Instance& i, const InstanceRunSettings& run,
                           const std::string& request_hash) {
  // RETURNING: the row as the triggers left it (revision), without a read after the write.
  constexpr std::string_view kInsert =
      "INSERT INTO instance.instances (instance_id, tenant_id, name, spec_name, gpu_num, image, "
      "storage_id, template, idle_timeout_s, max_run_time_s, request_hash, desired_state, state, "
      "storage_uid, image_reference, registry_secret, limits, deny_egress) VALUES ($1, $2, $3, "
      "$4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18) "
      "RETURNING " GPUAAS_INSTANCE_COLUMNS;
  return InstanceFromRow(*tx.Exec(kInsert, i.instance_id(), i.tenant_id(), i.name(), i.spec_name(),
                                  i.gpu_num(), i.image(), i.storage_id(),
                                  db::Bytes{i.template_().SerializeAsString()},
                                  static_cast<int64_t>(i.idle_timeout().seconds()),
                                  static_cast<int64_t>(i.max_run_time().seconds()), request_hash,
                                  pb::DESIRED_STATE_RUNNING, pb::STATE_PENDING, i.storage_uid(),
                                  i.image_reference(), db::Bytes{run.registry_secret},
                                  db::Bytes{run.limits.SerializeAsString()}, run.deny_egress)
                              .First());
}

std::vector<pb::Event> Events(db::Tx& tx, const std::string& instance_id, int limit) {
  constexpr std::string_view kEvents =
      "SELECT " GPUAAS_SQL_MICROS("time") ", state, reason, message FROM ("
      "SELECT * FROM instance.events WHERE instance_id = $1 ORDER BY seq DESC LIMIT $2) e "
      "ORDER BY seq";
  return tx.Exec(kEvents, instance_id, limit).Map([](const db::Row& r) {
    pb::Event e;
    *e.mutable_time() = ToProtoTime(r.GetTime(0));
    e.set_state(r.GetEnum<pb::State>(1));
    e.set_reason(r.GetEnum<pb::Reason>(2));
    e.set_message(r.Get<std::string>(3));
    return e;
  });
}

std::vector<pb::Instance> ListInstances(db::Tx& tx, const std::string& tenant, pb::State state,
                                        const std::string& spec_name, const std::string& after,
                                        int limit) {
  constexpr std::string_view kList = GPUAAS_INSTANCE_FROM
      "WHERE delete_time IS NULL AND ($1 = '' OR tenant_id = $1) AND ($2 = 0 OR state = $2) "
      "AND ($3 = '' OR spec_name = $3) AND instance_id > $4 ORDER BY instance_id LIMIT $5";
  return tx.Exec(kList, tenant, state, spec_name, after, limit).Map([](const db::Row& r) {
    return InstanceFromRow(r).instance;
  });
}

int64_t RevisionHorizon(db::Tx& tx, int64_t* drawn_out) {
  // Two statements, in this order (0003_revision_horizon.sql): the sequence first, then the
  // floors still held; the caller's next statement then sees what both allow.
  constexpr std::string_view kDrawn =
      "SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END FROM instance.revisions";
  constexpr std::string_view kLowestFloor =
      "SELECT min((classid::int8 - 1900000000) * 2147483648 + objid::int8) FROM pg_locks "
      "WHERE locktype = 'advisory' AND objsubid = 2 AND classid::int8 >= 1900000000 "
      "AND classid::int8 < 1900000000 + 1048576";
  const int64_t drawn = tx.Exec(kDrawn).First()->Get<int64_t>(0);
  const std::optional<int64_t> floor = tx.Exec(kLowestFloor).First()->GetOptional<int64_t>(0);
  if (drawn_out != nullptr) *drawn_out = drawn;
  return floor ? std::min(drawn, *floor) : drawn;
}

std::vector<InstanceRow> Changes(db::Tx& tx, const std::string& tenant, int64_t after,
                                 int64_t horizon, int limit) {
  constexpr std::string_view kChanges = GPUAAS_INSTANCE_FROM
      "WHERE revision > $1 AND revision <= $2 AND ($3 = '' OR tenant_id = $3) "
      "ORDER BY revision LIMIT $4";
  return tx.Exec(kChanges, after, horizon, tenant, limit).Map(InstanceFromRow);
}

int64_t PurgedRevision(db::Tx& tx) {
  constexpr std::string_view kPurged = "SELECT purged_revision FROM instance.watch_horizon";
  return tx.Exec(kPurged).First()->Get<int64_t>(0);
}

void MarkStart(db::Tx& tx, const std::string& instance_id) {
  constexpr std::string_view kStart =
      "UPDATE instance.instances SET desired_state = 1, state = 1, reason = 0, message = '', "
      "exit_code = 0, run = run + 1, needs_work = true, next_attempt_time = now(), attempts = 0 "
      "WHERE instance_id = $1";
  tx.Exec(kStart, instance_id);
}

void SetDesired(db::Tx& tx, const std::string& instance_id, pb::DesiredState desired) {
  constexpr std::string_view kSetDesired =
      "UPDATE instance.instances SET desired_state = $2, needs_work = true, "
      "next_attempt_time = now(), attempts = 0 WHERE instance_id = $1";
  tx.Exec(kSetDesired, instance_id, desired);
}

void LockTenant(db::Tx& tx, const std::string& tenant) {
  constexpr std::string_view kLock = "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))";
  tx.Exec(kLock, "instance.quota/" + tenant);
}

TenantUsage ReadTenantUsage(db::Tx& tx, const std::string& tenant, const std::string& instance_id) {
  constexpr std::string_view kUsage =
      "SELECT count(*), coalesce(sum(gpu_num) FILTER (WHERE desired_state = 1 AND state <> 6 "
      "AND instance_id <> $2), 0)::int8, "
      "(SELECT request_hash FROM instance.instances WHERE instance_id = $2) "
      "FROM instance.instances WHERE tenant_id = $1 AND delete_time IS NULL";
  const db::Row row = *tx.Exec(kUsage, tenant, instance_id).First();
  return TenantUsage{.instances = row.Get<int64_t>(0),
                     .gpus = row.Get<int64_t>(1),
                     .taken_by = row.GetOptional<std::string>(2)};
}

std::vector<pb::UsageRecord> ListUsage(db::Tx& tx, const std::string& tenant,
                                       const std::string& instance_id, absl::Time start,
                                       absl::Time end, int64_t after_id, int limit) {
  constexpr std::string_view kUsage =
      "SELECT usage_id, instance_id, tenant_id, spec_name, node_id, gpu_num, micros_per_hour, "
      "currency, " GPUAAS_SQL_MICROS("start_time") ", " GPUAAS_SQL_MICROS("end_time") ", "
      GPUAAS_USAGE_CLIPPED " FROM instance.usage "
      "WHERE ($1 = '' OR tenant_id = $1) AND ($2 = '' OR instance_id = $2) "
      "AND start_time < " GPUAAS_SQL_FROM_MICROS("$4") " AND coalesce(end_time, 'infinity') > "
      GPUAAS_SQL_FROM_MICROS("$3") " AND usage_id > $5 ORDER BY usage_id LIMIT $6";
  return tx.Exec(kUsage, tenant, instance_id, start, end, after_id, limit)
      .Map([](const db::Row& r) {
        pb::UsageRecord u;
        u.set_usage_id(std::to_string(r.Get<int64_t>(0)));
        u.set_instance_id(r.Get<std::string>(1));
        u.set_tenant_id(r.Get<std::string>(2));
        u.set_spec_name(r.Get<std::string>(3));
        u.set_node_id(r.Get<std::string>(4));
        u.set_gpu_num(r.Get<int32_t>(5));
        u.mutable_price()->set_micros_per_hour(r.Get<int64_t>(6));
        u.mutable_price()->set_currency(r.Get<std::string>(7));
        *u.mutable_start_time() = ToProtoTime(r.GetTime(8));
        if (auto t = r.GetOptionalTime(9)) *u.mutable_end_time() = ToProtoTime(*t);
        u.set_seconds(r.Get<int64_t>(10));
        u.set_amount_micros(u.seconds() * u.price().micros_per_hour() / 3600);
        return u;
      });
}

std::vector<pb::UsageTotal> UsageTotals(db::Tx& tx, const std::string& tenant,
                                        const std::string& instance_id, absl::Time start,
                                        absl::Time end) {
  constexpr std::string_view kTotals =
      "SELECT tenant_id, currency, sum(s)::int8, sum(s * micros_per_hour / 3600)::int8 FROM ("
      "SELECT tenant_id, currency, micros_per_hour, " GPUAAS_USAGE_CLIPPED " AS s "
      "FROM instance.usage WHERE ($1 = '' OR tenant_id = $1) AND ($2 = '' OR instance_id = $2) "
      "AND start_time < " GPUAAS_SQL_FROM_MICROS("$4") " AND coalesce(end_time, 'infinity') > "
      GPUAAS_SQL_FROM_MICROS("$3") ") u GROUP BY tenant_id, currency ORDER BY tenant_id, currency";
  return tx.Exec(kTotals, tenant, instance_id, start, end).Map([](const db::Row& r) {
    pb::UsageTotal t;
    t.set_tenant_id(r.Get<std::string>(0));
    t.set_currency(r.Get<std::string>(1));
    t.set_seconds(r.Get<int64_t>(2));
    t.set_amount_micros(r.Get<int64_t>(3));
    return t;
  });
}

}  // namespace gpuaas::instance::repo
