# gpuaas-storage image. Build from the repository root:
#   docker build -f docker/storage.Dockerfile -t gpuaas/storage:dev .
# or let docker/docker-compose.yml build it. The same two stages as auth.Dockerfile: the builder
# has the toolchain, the runtime gets only the shared libraries the binaries link (from `ldd`).

FROM debian:bookworm AS builder
ENV DEBIAN_FRONTEND=noninteractive
WORKDIR /src
COPY tools/install-deps tools/install-deps
RUN apt-get update -q \
 && tools/install-deps \
 && rm -rf /var/lib/apt/lists/*
COPY . .
# Werror off: a newer point release of a dependency must not break an image build; CI keeps -Werror.
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUAAS_WERROR=OFF \
 && cmake --build /build --target gpuaas-storage gpuaas-health -j"$(nproc)"
RUN mkdir -p /out \
 && cp /build/services/storage/gpuaas-storage /build/tools/health/gpuaas-health /out/ \
 && strip /out/gpuaas-storage /out/gpuaas-health \
 && for lib in $(ldd /out/gpuaas-storage /out/gpuaas-health | awk '/=> \//{print $3}' | sort -u); do \
      dpkg -S "$lib" 2>/dev/null || dpkg -S "$(realpath "$lib")" 2>/dev/null || dpkg -S "/usr$lib"; \
    done | cut -d: -f1 | sort -u > /out/runtime-packages \
 && cat /out/runtime-packages

FROM debian:bookworm-slim AS runtime
ENV DEBIAN_FRONTEND=noninteractive
COPY --from=builder /out/runtime-packages /tmp/runtime-packages
RUN apt-get update -q \
 && xargs -a /tmp/runtime-packages apt-get install -y -q --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* /tmp/runtime-packages \
 && groupadd --system --gid 10001 gpuaas \
 && useradd --system --uid 10001 --gid gpuaas --no-create-home --shell /usr/sbin/nologin gpuaas
COPY --from=builder /out/gpuaas-storage /out/gpuaas-health /usr/local/bin/
USER 10001:10001
# The volumes' bytes live under the data root: mount a volume there. The S3 data plane listens
# on 9000.
ENV GPUAAS_STORAGE_LISTEN=0.0.0.0:17053 \
    GPUAAS_STORAGE_METRICS_LISTEN=0.0.0.0:9103 \
    GPUAAS_STORAGE_S3_LISTEN=0.0.0.0:9000 \
    GPUAAS_STORAGE_DATA_ROOT=/var/lib/gpuaas-storage
VOLUME /var/lib/gpuaas-storage
EXPOSE 17053 9103 9000
# grpc.health.v1 over plaintext loopback. With TLS on (GPUAAS_STORAGE_TLS_*), override the check
# with `gpuaas-health 127.0.0.1:17053 --ca ... [--cert ... --key ...]`.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["gpuaas-health", "127.0.0.1:17053"]
ENTRYPOINT ["gpuaas-storage"]
