#!/usr/bin/env bash
# Checks what `docker compose build` / `up` need, before they fail with a screenful:
# a Docker engine, the base image (present, or pullable), and the data directory.
# One line per problem, exit 1 on the first; "preflight: ok ..." and exit 0 when all is there.
#   REBOUND_BASE_IMAGE  default node:20-bookworm-slim
#   REBOUND_DATA        default ./data (relative to the repository, like the compose file)
set -uo pipefail
cd "$(dirname "$0")/../.."
base=${REBOUND_BASE_IMAGE:-node:20-bookworm-slim}
data=${REBOUND_DATA:-./data}
fail() { echo "preflight: $*" >&2; exit 1; }

command -v docker >/dev/null 2>&1 || fail "no docker command; install Docker (Debian: apt-get install -y docker.io docker-compose)"
if ! out=$(docker info --format '{{.ServerVersion}}' 2>&1); then
  fail "no Docker engine answers ($(echo "$out" | grep -v '^$' | tail -1)); start dockerd (as root: dockerd >/var/log/dockerd.log 2>&1 &)"
fi
engine=$out
if ! docker image inspect "$base" >/dev/null 2>&1; then
  if ! out=$(timeout 120 docker pull -q "$base" 2>&1); then
    fail "base image $base is missing and cannot be pulled ($(echo "$out" | tail -1)); build one with make-base-image.sh [TAG] and export REBOUND_BASE_IMAGE=TAG"
  fi
fi
[ -d "$data" ] || fail "data directory $data does not exist; create it (mkdir -p $data/input) or set REBOUND_DATA to one"
echo "preflight: ok (Docker engine $engine, base image $base, data directory $data)"
