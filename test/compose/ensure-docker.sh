#!/usr/bin/env bash
# Makes Docker usable for `npm run test:compose`, installing and starting what is missing when run
# as root: Debian's docker.io and docker-compose, a dockerd in the background, and a base image
# (REBOUND_BASE_IMAGE if set; else node:20-bookworm-slim if present or pullable; else
# rebound-node-base:trixie, built with scripts/docker/make-base-image.sh, which needs debootstrap),
# and Debian's etcd-server for the etcd variant. dockerd logs to REBOUND_DOCKERD_LOG (default
# /var/log/rebound-dockerd.log).
# Exit 0 when all is there. Exit 1, with one line on stderr saying why, only where Docker cannot
# run here: it cannot be installed (not root, no apt-get, the install fails) or the kernel cannot
# run containers (a reason detected and named). Exit 2, with one line, when Docker is installed but
# does not work (dockerd exits or does not answer, no base image can be made): that is a failure to
# look into, not a machine to skip.
set -uo pipefail
cd "$(dirname "$0")/../.."
say() { echo "ensure-docker: $*"; }
cannot() { echo "ensure-docker: Docker cannot run here: $*" >&2; exit 1; }
broken() { echo "ensure-docker: Docker is installed but does not work: $*" >&2; exit 2; }
is_root() { [ "$(id -u)" = 0 ]; }

apt_install() {
  is_root || cannot "$* missing and not root to install them"
  command -v apt-get >/dev/null || cannot "$* missing and no apt-get to install them"
  local log; log=$(mktemp)
  say "installing $*"
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >"$log" 2>&1; then
    apt-get update -qq >"$log" 2>&1
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >"$log" 2>&1 || { rm -f "$log"; cannot "apt-get install $* failed"; }
  fi
  rm -f "$log"
}

missing=()
command -v dockerd >/dev/null || missing+=(docker.io)
command -v docker >/dev/null || missing+=(docker.io)
command -v docker-compose >/dev/null || docker compose version >/dev/null 2>&1 || missing+=(docker-compose)
[ ${#missing[@]} -eq 0 ] || apt_install $(printf '%s\n' "${missing[@]}" | sort -u)

# compose-etcd.e2e.ts mounts the host's etcd binary into docker-compose.etcd.yml's etcd service.
# Not a reason to skip the file-HA test: without it that file fails, saying what is missing.
if [ ! -x /usr/bin/etcd ] && [ -z "${REBOUND_ETCD_BINARY:-}" ]; then
  if is_root && command -v apt-get >/dev/null; then
    say "installing etcd-server (for docker-compose.etcd.yml)"
    { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq etcd-server || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq etcd-server; }; } >/dev/null 2>&1 \
      || say "etcd-server not installable: the etcd compose test will fail (no /usr/bin/etcd)"
  else
    say "no /usr/bin/etcd and not root to install etcd-server: the etcd compose test will fail"
  fi
fi

# What a container needs of the kernel, checked before dockerd so that a dockerd failure after
# these pass is Docker's (exit 2), not the machine's.
kernel_refuses_containers() {
  grep -qs ' cgroup2\? ' /proc/self/mounts || { echo "no cgroup filesystem is mounted (containers need cgroups)"; return; }
  local err
  if command -v unshare >/dev/null; then
    err=$(unshare --mount --uts --ipc --net --pid --fork true 2>&1) \
      || { echo "no new namespaces here, which containers need ($err)"; return; }
  fi
  return 1
}

if ! docker info >/dev/null 2>&1; then
  is_root || cannot "no Docker engine answers and not root to start dockerd"
  command -v dockerd >/dev/null || broken "no Docker engine answers and no dockerd although docker.io is installed"
  if why=$(kernel_refuses_containers); then cannot "$why"; fi
  log=${REBOUND_DOCKERD_LOG:-/var/log/rebound-dockerd.log}
  say "starting dockerd (log: $log)"
  setsid dockerd >"$log" 2>&1 </dev/null &
  pid=$!
  deadline=$((SECONDS + 60))
  until docker info >/dev/null 2>&1; do
    kill -0 "$pid" 2>/dev/null || broken "dockerd exited: $(grep -v '^$' "$log" | tail -1)"
    [ $SECONDS -lt $deadline ] || broken "dockerd did not answer within 60 s: $(tail -1 "$log")"
    sleep 0.5  # polling the engine's readiness, bounded by the deadline above
  done
fi
say "Docker engine $(docker info --format '{{.ServerVersion}}') answers"

if [ -n "${REBOUND_BASE_IMAGE:-}" ]; then
  docker image inspect "$REBOUND_BASE_IMAGE" >/dev/null 2>&1 || timeout 120 docker pull -q "$REBOUND_BASE_IMAGE" >/dev/null 2>&1 \
    || broken "REBOUND_BASE_IMAGE=$REBOUND_BASE_IMAGE is not present and cannot be pulled"
  say "base image $REBOUND_BASE_IMAGE"
elif docker image inspect node:20-bookworm-slim >/dev/null 2>&1 || timeout 120 docker pull -q node:20-bookworm-slim >/dev/null 2>&1; then
  say "base image node:20-bookworm-slim"
elif docker image inspect rebound-node-base:trixie >/dev/null 2>&1; then
  say "base image rebound-node-base:trixie (node:20-bookworm-slim cannot be pulled)"
else
  maker=${REBOUND_MAKE_BASE_IMAGE:-scripts/docker/make-base-image.sh}
  [ -f "$maker" ] || broken "node:20-bookworm-slim cannot be pulled and there is no $maker to build a base image"
  command -v debootstrap >/dev/null || apt_install debootstrap
  say "node:20-bookworm-slim cannot be pulled: building rebound-node-base:trixie with $maker"
  start=$SECONDS
  bash "$maker" rebound-node-base:trixie || broken "$maker failed"
  say "base image built in $((SECONDS - start)) s"
fi
