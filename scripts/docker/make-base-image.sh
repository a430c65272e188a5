#!/usr/bin/env bash
# Builds a Node base image from Debian's package archive, for hosts that reach that archive but
# no container registry: `bash scripts/docker/make-base-image.sh [TAG]` (default
# rebound-node-base:trixie). Needs root, a running dockerd and debootstrap.
#
# The image is Debian trixie (minbase) with Debian's nodejs (20.x) and ca-certificates, and no
# npm: the Dockerfile's default mode copies the host's installed node_modules into the image,
# so nothing inside a container needs a registry. Takes one to two minutes.
set -euo pipefail
tag=${1:-rebound-node-base:trixie}
suite=${REBOUND_BASE_SUITE:-trixie}
if docker image inspect "$tag" >/dev/null 2>&1; then
  echo "$tag: already present"
  exit 0
fi
command -v debootstrap >/dev/null || { echo "make-base-image: debootstrap is missing (apt-get install -y debootstrap)" >&2; exit 1; }

# The archive this host's apt already uses: a deb822 .sources file first, then sources.list.
archive=$(sed -n 's/^URIs:[[:space:]]*//p' /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -v -m1 security || true)
[ -n "$archive" ] || archive=$(awk '$1 == "deb" && $2 !~ /security/ { print $2; exit }' /etc/apt/sources.list 2>/dev/null || true)
[ -n "$archive" ] || { echo "make-base-image: apt has no Debian archive configured to build from" >&2; exit 1; }

rootfs=$(mktemp -d)
log=$(mktemp)
trap 'rm -rf "$rootfs" "$log"' EXIT
if ! debootstrap --variant=minbase --include=nodejs,ca-certificates "$suite" "$rootfs" "$archive" >"$log" 2>&1; then
  tail -n 20 "$log" >&2
  echo "make-base-image: debootstrap of $suite from $archive failed (the lines above say why)" >&2
  exit 1
fi
# No package caches or logs from the bootstrap in the image.
rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/log/*
tar -C "$rootfs" -c . | docker import -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' - "$tag" >/dev/null
echo "$tag: node $(docker run --rm --network none "$tag" node --version)"
