#!/usr/bin/env bash
# Checks what `docker compose build` / `up` need, before they fail with a screenful:
# a Docker engine, the base image (present, or pullable), and the data directory; with --etcd
# also the host's etcd binary that docker-compose.etcd.yml mounts into its etcd service.
# One line per problem, exit 1 on the first; "preflight: ok ..." and exit 0 when all is there.
#   REBOUND_BASE_IMAGE   default node:20-bookworm-slim
#   REBOUND_DATA         default ./data (relative to the repository, like the compose file)
#   REBOUND_ETCD_BINARY  default /usr/bin/etcd (--etcd only)
#   REBOUND_UID          default 10001: the user the containers run as, who must be able to write the data directory
set -uo pipefail
etcd=no
case "${1:-}" in
  "") ;;
  --etcd) etcd=yes ;;
  *) echo "usage: preflight.sh [--etcd]" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/../.."
base=${REBOUND_BASE_IMAGE:-node:20-bookworm-slim}
data=${REBOUND_DATA:-./data}
fail() { echo "preflight: $*" >&2; exit 1; }

command -v docker >/dev/null 2>&1 || fail "no docker command; install Docker with Compose"
if ! out=$(docker info --format '{{.ServerVersion}}' 2>&1); then
  fail "no Docker engine answers ($(echo "$out" | grep -v '^$' | tail -1)); start dockerd (as root: dockerd >/var/log/dockerd.log 2>&1 &)"
fi
engine=$out
if ! docker image inspect "$base" >/dev/null 2>&1; then
  if ! out=$(timeout 120 docker pull -q "$base" 2>&1); then
    fail "base image $base is missing and cannot be pulled ($(echo "$out" | tail -1)); build one with scripts/docker/make-base-image.sh [TAG] and export REBOUND_BASE_IMAGE=TAG"
  fi
fi
[ -d "$data" ] || fail "data directory $data does not exist; create it (mkdir -p $data/input) or set REBOUND_DATA to one"
# The containers run as REBOUND_UID: a data directory it cannot write fails every job at its sink
# (EACCES) after all the restarts, not at `up`.
uid=${REBOUND_UID:-10001}
owner=$(stat -c %u "$data")
mode=$(stat -c %a "$data")
if [ "$owner" != "$uid" ] && [ $((0$mode & 2)) -eq 0 ]; then
  fail "data directory $data belongs to uid $owner and the containers run as uid $uid, who cannot write it; chown -R $uid $data (or build with REBOUND_UID=$owner)"
fi
if [ "$etcd" = yes ]; then
  bin=${REBOUND_ETCD_BINARY:-/usr/bin/etcd}
  [ -f "$bin" ] && [ -x "$bin" ] || fail "no etcd binary at $bin for the etcd service; install it on this host (apt-get install -y etcd-server) or set REBOUND_ETCD_BINARY to one"
  version=$("$bin" --version 2>/dev/null | head -1)
  [ -n "$version" ] || fail "$bin does not run (--version printed nothing); it must be a Linux etcd binary, 3.4 or later"
  echo "preflight: ok (Docker engine $engine, base image $base, data directory $data, $version at $bin)"
  exit 0
fi
echo "preflight: ok (Docker engine $engine, base image $base, data directory $data)"
