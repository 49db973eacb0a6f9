#!/usr/bin/env bash
# docker/'s compose files as docker-compose reads them (no Docker engine here, so no image is
# built): the single-node stack alone, and with docker-compose.ha.yml laid over it, which must
# have the HA shape of issue 25: etcd and two Patroni nodes, two replicas of auth, stock and
# instance, every service's DSN naming both nodes with target_session_attrs=read-write, and every
# caller naming both replicas.
#   compose_config.sh SOURCE_DIR
set -euo pipefail

cd "$1/docker"
fail() { echo "FAIL: $*" >&2; exit 1; }
# Placeholders: the variables the files demand (docker/.env on a developer's machine).
export POSTGRES_PASSWORD=p REPLICATION_PASSWORD=r PATRONI_API_PASSWORD=a ETCD_ROOT_PASSWORD=e
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

docker-compose -f docker-compose.yml config >"$out/single.yml" || fail "docker-compose.yml"
docker-compose -f docker-compose.yml -f docker-compose.ha.yml config >"$out/ha.yml" \
  || fail "docker-compose.yml + docker-compose.ha.yml"

# What each file resolves to, as "service KEY=value" lines of its environment.
/usr/bin/python3 - "$out/single.yml" "$out/ha.yml" <<'PY'
import sys, yaml

def load(path):
    return yaml.safe_load(open(path))["services"]

def fail(msg):
    sys.exit("FAIL: " + msg)

single, ha = load(sys.argv[1]), load(sys.argv[2])
if "etcd" in single or "postgres-2" in single:
    fail("the single-node file has HA services")
for name in ["etcd", "postgres", "postgres-2", "auth-2", "stock-2", "instance-2"]:
    if name not in ha:
        fail(f"HA: no service {name}")
for name, svc in ha.items():
    for key, value in (svc.get("environment") or {}).items():
        value = str(value)
        if key.endswith("_DB_DSN") or key == "ADMIN_DSN":
            if "host=postgres,postgres-2" not in value or "target_session_attrs=read-write" not in value:
                fail(f"HA: {name}'s {key} does not reach the primary of both nodes: {value}")
        for service, port in [("auth", 17051), ("stock", 17052), ("instance", 17054)]:
            if key.endswith(f"_{service.upper()}_ADDR") and value != f"{service}:{port},{service}-2:{port}":
                fail(f"HA: {name}'s {key} is {value}, not both replicas")
# Published host ports: none twice.
seen = {}
for name, svc in ha.items():
    for port in svc.get("ports") or []:
        published = port["published"] if isinstance(port, dict) else str(port).rsplit(":", 1)[0]
        key = str(published)
        if key in seen:
            fail(f"HA: host port {key} published by {seen[key]} and {name}")
        seen[key] = name
print(f"compose config: single-node {len(single)} services, HA {len(ha)} services")
PY
