# PostgreSQL 15 under Patroni, and etcd (Debian's, as tools/install-deps installs them), for
# docker/docker-compose.ha.yml: one image for the etcd service and both database nodes.
#   docker build -f docker/patroni.Dockerfile -t gpuaas/patroni:dev .
FROM debian:bookworm-slim
ENV DEBIAN_FRONTEND=noninteractive
# No "main" cluster from the package: Patroni makes (or copies) the node's own.
RUN mkdir -p /etc/postgresql-common/createcluster.d \
 && echo 'create_main_cluster = false' > /etc/postgresql-common/createcluster.d/patroni.conf \
 && apt-get update -q \
 && apt-get install -y -q --no-install-recommends postgresql-15 patroni python3-etcd \
      etcd-server etcd-client curl ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /var/lib/postgresql/data /var/lib/etcd \
 && chown postgres:postgres /var/lib/postgresql/data /var/lib/etcd
USER postgres
