#!/bin/sh
# Runs inside `docker build` (see Dockerfile): puts the runtime dependencies into the image.
#   auto     the build context's node_modules if it has one, else npm ci --omit=dev
#   context  the build context's node_modules (installed by `npm ci` on a linux-x64 host), or fail
#   npm      npm ci --omit=dev inside the image (needs the npm registry from inside the build)
set -eu
mode=${1:-auto}
fail() { echo "rebound image: $*" >&2; exit 1; }
command -v node >/dev/null 2>&1 || fail "the base image (REBOUND_BASE_IMAGE) has no node; use node:20-bookworm-slim or one built by scripts/docker/make-base-image.sh"
node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a===20&&b>=3)?0:1)' \
  || fail "the base image has node $(node --version); Rebound needs Node 20.3 or newer"
have=no
[ -f node_modules/@grpc/grpc-js/package.json ] && [ -f node_modules/esbuild/package.json ] && have=yes
case "$mode" in
  auto) [ "$have" = yes ] && mode=context || mode=npm ;;
  context) [ "$have" = yes ] || fail "REBOUND_NODE_MODULES=context but the build context has no installed node_modules; run 'npm ci' in the repository first, or build with REBOUND_NODE_MODULES=npm" ;;
  npm) ;;
  *) fail "REBOUND_NODE_MODULES=$mode: expected auto, context or npm" ;;
esac
if [ "$mode" = npm ]; then
  command -v npm >/dev/null 2>&1 || fail "REBOUND_NODE_MODULES=npm but the base image has no npm"
  rm -rf node_modules
  npm ci --omit=dev --no-audit --no-fund
  echo "rebound image: dependencies installed with npm ci --omit=dev"
else
  echo "rebound image: reusing the node_modules of the build context"
fi
# The workspaces are linked, not copied: a context whose links are broken would fail at run time.
[ -e node_modules/@rebound/core/package.json ] || fail "node_modules/@rebound/core does not resolve; run 'npm ci' again in the repository"
