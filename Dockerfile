# One image for every Rebound process; docker-compose.yml picks the role by command.
#
# Build arguments:
#   REBOUND_BASE_IMAGE    any Debian-like image with Node >= 20.3 (and npm for the npm mode).
#                         Default node:20-bookworm-slim. Where no registry is reachable, build an
#                         equivalent with scripts/docker/make-base-image.sh and pass its tag.
#   REBOUND_NODE_MODULES  where the dependencies come from:
#                           auto    (default) the node_modules of the build context when `npm ci`
#                                   installed them there (same linux-x64 platform), else npm ci
#                           context only the context's node_modules; fails when there are none
#                           npm     npm ci --omit=dev inside the image (needs the npm registry)
ARG REBOUND_BASE_IMAGE=node:20-bookworm-slim
FROM ${REBOUND_BASE_IMAGE}
ARG REBOUND_NODE_MODULES=auto
WORKDIR /opt/rebound
# The whole context at once: .dockerignore keeps .git, logs, data and test output out, and whether
# node_modules is there decides the auto mode.
COPY . .
RUN sh scripts/docker/install-deps.sh "$REBOUND_NODE_MODULES"
# What every process runs (bin/rebound.js refuses a missing or stale build). Built here from the
# image's own sources, never copied: .dockerignore leaves the context's dist/ out. A no-op when
# install-deps.sh's npm ci already built it (prepare).
RUN node scripts/build.mjs
# Client commands find the cluster through the HA directory on the shared volume.
ENV REBOUND_HA_DIR=/rebound/ha
# Not root: a planted job or HA record acts with this user's rights only. The mount points belong
# to it, so a fresh named volume (docker copies the image's ownership into it) is writable; a bind
# mount at /data must be writable by REBOUND_UID on the host (e.g. chown 10001 data, or build
# with --build-arg REBOUND_UID=$(id -u)). /etcd-client: the compose etcd's CA, client certificate
# and password for the daemons (docker-compose.etcd.yml).
ARG REBOUND_UID=10001
RUN groupadd --system --gid "$REBOUND_UID" rebound \
  && useradd --system --uid "$REBOUND_UID" --gid rebound --home-dir /rebound --no-create-home rebound \
  && mkdir -p /rebound /etcd /etcd-client /shuffle /data \
  && chown rebound:rebound /rebound /etcd /etcd-client /shuffle /data
USER rebound
ENTRYPOINT ["node", "bin/rebound.js"]
