# gpuaas-gateway image (the REST API and the web console). Build from the repository root:
#   docker build -f docker/gateway.Dockerfile -t gpuaas/gateway:dev .
# or let docker/docker-compose.yml build it. The same two stages as auth.Dockerfile: the builder
# has the toolchain, the runtime gets only the shared libraries the binary links (from `ldd`).

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
 && cmake --build /build --target gpuaas-gateway -j"$(nproc)"
RUN mkdir -p /out \
 && cp /build/services/gateway/gpuaas-gateway /out/ \
 && strip /out/gpuaas-gateway \
 && for lib in $(ldd /out/gpuaas-gateway | awk '/=> \//{print $3}' | sort -u); do \
      dpkg -S "$lib" 2>/dev/null || dpkg -S "$(realpath "$lib")" 2>/dev/null || dpkg -S "/usr$lib"; \
    done | cut -d: -f1 | sort -u > /out/runtime-packages \
 && cat /out/runtime-packages

FROM debian:bookworm-slim AS runtime
ENV DEBIAN_FRONTEND=noninteractive
COPY --from=builder /out/runtime-packages /tmp/runtime-packages
RUN apt-get update -q \
 && xargs -a /tmp/runtime-packages apt-get install -y -q --no-install-recommends ca-certificates curl \
 && rm -rf /var/lib/apt/lists/* /tmp/runtime-packages \
 && groupadd --system --gid 10001 gpuaas \
 && useradd --system --uid 10001 --gid gpuaas --no-create-home --shell /usr/sbin/nologin gpuaas
COPY --from=builder /out/gpuaas-gateway /usr/local/bin/
USER 10001:10001
# The gateway holds no credential of its own: it calls the services with each caller's token.
ENV GPUAAS_GATEWAY_LISTEN=0.0.0.0:8090 \
    GPUAAS_GATEWAY_METRICS_LISTEN=0.0.0.0:9106
EXPOSE 8090 9106
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["curl", "-fs", "http://127.0.0.1:8090/healthz"]
ENTRYPOINT ["gpuaas-gateway"]
