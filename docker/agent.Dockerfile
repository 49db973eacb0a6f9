# gpuaas-agent image: the node agent, plus gpuaasctl and tools/agent-credentials for the job that
# makes the agents' API key (see docker-compose.yml). Build from the repository root:
#   docker build -f docker/agent.Dockerfile -t gpuaas/agent:dev .
# The same two stages as auth.Dockerfile. On a GPU host run it with the NVIDIA container runtime
# (`--gpus all`), which mounts libnvidia-ml.so.1: the agent loads it at run time and the image
# carries nothing of NVIDIA's. Without GPUs, set GPUAAS_AGENT_SIMULATE_GPUS (e.g. 8xA100-80GB).
# Workloads run under bubblewrap, each as a uid of its own, so the agent runs as root in its container and
# needs user namespaces there (docker-compose.yml: seccomp and AppArmor unconfined); python3 is
# in the image for the process runtime's workloads, which see the container's /usr.

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
 && cmake --build /build --target gpuaas-agent gpuaas-workload-shim gpuaas-image-unpacker \
      gpuaas-health gpuaasctl \
      -j"$(nproc)"
RUN mkdir -p /out \
 && cp /build/services/agent/gpuaas-agent /build/services/agent/gpuaas-workload-shim \
       /build/services/agent/gpuaas-image-unpacker /build/tools/health/gpuaas-health \
       /build/tools/gpuaasctl/gpuaasctl tools/agent-credentials /out/ \
 && strip /out/gpuaas-agent /out/gpuaas-workload-shim /out/gpuaas-image-unpacker \
      /out/gpuaas-health /out/gpuaasctl \
 && for lib in $(ldd /out/gpuaas-agent /out/gpuaas-workload-shim /out/gpuaas-image-unpacker \
                 /out/gpuaas-health /out/gpuaasctl \
                 | awk '/=> \//{print $3}' | sort -u); do \
      dpkg -S "$lib" 2>/dev/null || dpkg -S "$(realpath "$lib")" 2>/dev/null || dpkg -S "/usr$lib"; \
    done | cut -d: -f1 | sort -u > /out/runtime-packages \
 && cat /out/runtime-packages

FROM debian:bookworm-slim AS runtime
ENV DEBIAN_FRONTEND=noninteractive
COPY --from=builder /out/runtime-packages /tmp/runtime-packages
RUN apt-get update -q \
 && xargs -a /tmp/runtime-packages apt-get install -y -q --no-install-recommends ca-certificates \
      bubblewrap python3 \
 && rm -rf /var/lib/apt/lists/* /tmp/runtime-packages \
 && groupadd --system --gid 10001 gpuaas \
 && useradd --system --uid 10001 --gid gpuaas --no-create-home --shell /usr/sbin/nologin gpuaas \
 && mkdir -p /var/lib/gpuaas-agent /var/lib/gpuaas-workloads /var/lib/gpuaas-keys/service \
      /var/lib/gpuaas-keys/proxy \
 && chown 10001:10001 /var/lib/gpuaas-agent /var/lib/gpuaas-keys/service /var/lib/gpuaas-keys/proxy \
 && chmod 0700 /var/lib/gpuaas-agent /var/lib/gpuaas-keys/service /var/lib/gpuaas-keys/proxy \
 && chmod 0711 /var/lib/gpuaas-workloads
# gpuaas-image-unpacker beside the agent, where it looks for it (every registry's bytes are
# parsed and unpacked there, sandboxed).
COPY --from=builder /out/gpuaas-agent /out/gpuaas-workload-shim /out/gpuaas-image-unpacker \
     /out/gpuaas-health /out/gpuaasctl /out/agent-credentials /usr/local/bin/
# The credentials job runs as the gpuaas user (compose sets `user`); the agent as root, so that
# its workloads run as nobody.
# A named volume mounted here starts with this directory's owner and mode: the API key stays
# readable by the agent's user only. The job writes the instance service's and the proxy's keys
# under /var/lib/gpuaas-keys, each into a volume only its own service mounts.
VOLUME /var/lib/gpuaas-agent
ENV GPUAAS_AGENT_LISTEN=0.0.0.0:17061 \
    GPUAAS_AGENT_METRICS_LISTEN=0.0.0.0:9161 \
    GPUAAS_AGENT_API_KEY_FILE=/var/lib/gpuaas-agent/api-key \
    GPUAAS_AGENT_WORKLOAD_ROOT=/var/lib/gpuaas-workloads
EXPOSE 17061 9161
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["gpuaas-health", "127.0.0.1:17061"]
ENTRYPOINT ["gpuaas-agent"]
