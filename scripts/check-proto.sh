#!/usr/bin/env bash
# Fails when the committed generated types differ from what proto/ generates (drift).
set -euo pipefail
cd "$(dirname "$0")/.."
# Generates into a temporary directory: rewriting the tree, even with the same bytes, would make
# bin/rebound.js refuse the build as stale.
fresh=$(mktemp -d)
trap 'rm -rf "$fresh"' EXIT
bash scripts/gen-proto.sh "$fresh"
if ! diff -r packages/core/src/generated "$fresh/generated" >/dev/null || ! diff packages/core/src/types.ts "$fresh/types.ts" >/dev/null; then
  echo "generated proto types are out of date: run 'npm run gen:proto' and commit the result" >&2
  diff -r packages/core/src/generated "$fresh/generated" | head -20 >&2 || true
  exit 1
fi
echo "proto types: up to date"
