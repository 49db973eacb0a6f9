# gpuaas-auth image. Build from the repository root:
#   docker build -f docker/auth.Dockerfile -t gpuaas/auth:dev .
# or let docker/docker-compose.yml build it.
#
# Two stages: the builder has the whole toolchain (tools/install-deps, the same script developers
# run); the runtime stage gets only the shared libraries the binaries actually link, derived from
# `ldd` in the builder, so the list cannot drift from the code. Both stages are bookworm, so the
# library versions match exactly.

FROM debian:bookworm AS builder
ENV DEBIAN_FRONTEND=noninteractive
WORKDIR /src
# Dependencies first, in their own layer: source edits do not reinstall the toolchain.
COPY tools/install-deps tools/install-deps
RUN apt-get update -q \
 && tools/install-deps \
 && rm -rf /var/lib/apt/lists/*
COPY . .
# Werror off: a newer point release of a dependency must not break an image build; CI keeps -Werror.
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUAAS_WERROR=OFF \
 && cmake --build /build --target gpuaas-auth gpuaas-health -j"$(nproc)"
RUN mkdir -p /out \
 && cp /build/services/auth/gpuaas-auth /build/tools/health/gpuaas-health /out/ \
 && strip /out/gpuaas-auth /out/gpuaas-health \
 && for lib in $(ldd /out/gpuaas-auth /out/gpuaas-health | awk '/=> \//{print $3}' | sort -u); do \
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
COPY --from=builder /out/gpuaas-auth /out/gpuaas-health /usr/local/bin/
USER 10001:10001
ENV GPUAAS_AUTH_LISTEN=0.0.0.0:17051 \
    GPUAAS_AUTH_METRICS_LISTEN=0.0.0.0:9101
EXPOSE 17051 9101
# grpc.health.v1 over plaintext loopback. With TLS on (GPUAAS_AUTH_TLS_*), override the check
# with `gpuaas-health 127.0.0.1:17051 --ca ... [--cert ... --key ...]`.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["gpuaas-health", "127.0.0.1:17051"]
ENTRYPOINT ["gpuaas-auth"]
