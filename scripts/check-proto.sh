#!/usr/bin/env bash
# Fails when the committed generated types differ from what proto/ generates (drift).
set -euo pipefail
cd "$(dirname "$0")/.."
before=$(mktemp -d)
cp -r packages/core/src/generated "$before/generated"
cp packages/core/src/types.ts "$before/types.ts"
bash scripts/gen-proto.sh
if ! diff -r "$before/generated" packages/core/src/generated >/dev/null || ! diff "$before/types.ts" packages/core/src/types.ts >/dev/null; then
  echo "generated proto types are out of date: run 'npm run gen:proto' and commit the result" >&2
  diff -r "$before/generated" packages/core/src/generated | head -20 >&2 || true
  exit 1
fi
echo "proto types: up to date"
