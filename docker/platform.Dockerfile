# gpuaas/platform:dev: every binary of the platform on the base docker/build-images makes (Debian
# 12 and the packages the binaries and the services' jobs need). Built by docker/build-images
# from a context of this checkout's binaries; each compose service picks its program.
ARG BASE
FROM ${BASE}
# Older builds of this image are pruned by this label (docker/build-images).
LABEL org.gpuaas.image=platform
COPY bin/ /usr/local/bin/
