#!/bin/sh
# Entry point of the compose `client` service: `docker compose run --rm client <rebound args>`.
# Commands that talk to the cluster first wait (bounded, $REBOUND_CLIENT_WAIT seconds, default 60)
# until the leader serves, so a client started together with the cluster does not fail on a race,
# and one started without a cluster says so in one line. `leader` does not wait: it reports the
# recorded leader even when that one has just died.
set -e
wait=yes
case "${1:-}" in
  ""|help|config|events|leader) wait=no ;;
esac
for arg in "$@"; do
  case "$arg" in -h|--help|-V|--version) wait=no ;; esac
done
if [ "$wait" = yes ]; then node scripts/docker/health.mjs await-leader; fi
exec node bin/rebound.js "$@"
