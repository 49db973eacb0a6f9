# gpuaas-instance image. Build from the repository root:
#   docker build -f docker/instance.Dockerfile -t gpuaas/instance:dev .
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
 && cmake --build /build --target gpuaas-instance gpuaas-health -j"$(nproc)"
RUN mkdir -p /out \
 && cp /build/services/instance/gpuaas-instance /build/tools/health/gpuaas-health /out/ \
 && strip /out/gpuaas-instance /out/gpuaas-health \
 && for lib in $(ldd /out/gpuaas-instance /out/gpuaas-health | awk '/=> \//{print $3}' | sort -u); do \
      dpkg -S "$lib" 2>/dev/null || dpkg -S "$(realpath "$lib")" 2>/dev/null || dpkg -S "/usr$lib"; \
    done | cut -d: -f1 | sort -u > /out/runtime-packages \
 && cat /out/runtime-packages

FROM debian:bookworm-slim AS runtime
ENV DEBIAN_FRONTEND=noninteractive
COPY --from=builder /out/runtime-packages /tmp/runtime-packages
RUN apt-get update -q \
 && xargs -a /tmp/runtime-packages apt-get install -y -q --no-install-recommends ca-certificates \
      skopeo \
 && rm -rf /var/lib/apt/lists/* /tmp/runtime-packages \
 && groupadd --system --gid 10001 gpuaas \
 && useradd --system --uid 10001 --gid gpuaas --no-create-home --shell /usr/sbin/nologin gpuaas
COPY --from=builder /out/gpuaas-instance /out/gpuaas-health /usr/local/bin/
USER 10001:10001
# The reconciler calls the stock and storage services with a service-role API key: mount it and
# point GPUAAS_INSTANCE_API_KEY_FILE at it. skopeo pins images' tags to digests at create.
ENV GPUAAS_INSTANCE_LISTEN=0.0.0.0:17054 \
    GPUAAS_INSTANCE_METRICS_LISTEN=0.0.0.0:9104
EXPOSE 17054 9104
# grpc.health.v1 over plaintext loopback. With TLS on (GPUAAS_INSTANCE_TLS_*), override the check
# with `gpuaas-health 127.0.0.1:17054 --ca ... [--cert ... --key ...]`.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["gpuaas-health", "127.0.0.1:17054"]
ENTRYPOINT ["gpuaas-instance"]
