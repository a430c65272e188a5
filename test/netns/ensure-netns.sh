#!/usr/bin/env bash
# Makes `npm run test:netns` runnable: root, iproute2 (ip netns), nftables (partitions),
# util-linux (nsenter: storage cuts) and etcd-server (the etcd scenarios), installing what is
# missing with apt-get. Exit 0 when all is there; else one line saying why, and exit 1.
set -uo pipefail
say() { echo "ensure-netns: $*"; }
cannot() { echo "ensure-netns: the netns tests cannot run here: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || cannot "not root (ip netns needs CAP_SYS_ADMIN and CAP_NET_ADMIN)"
[ "$(uname -s)" = Linux ] || cannot "not Linux"

missing=()
command -v ip >/dev/null || missing+=(iproute2)
command -v nft >/dev/null || missing+=(nftables)
command -v nsenter >/dev/null || missing+=(util-linux)
command -v etcd >/dev/null || missing+=(etcd-server)
command -v etcdctl >/dev/null || missing+=(etcd-client)
if [ ${#missing[@]} -gt 0 ]; then
  command -v apt-get >/dev/null || cannot "${missing[*]} missing and no apt-get to install them"
  say "installing ${missing[*]}"
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1; then
    apt-get update -qq >/dev/null 2>&1
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1 || cannot "apt-get install ${missing[*]} failed"
  fi
fi

# A container without CAP_SYS_ADMIN/CAP_NET_ADMIN has the tools but not the right to use them.
probe="rb-$$-probe"
err=$(ip netns add "$probe" 2>&1) || cannot "ip netns add fails: $err"
trap 'ip netns del "$probe" 2>/dev/null' EXIT
err=$(ip netns exec "$probe" nft list tables 2>&1) || cannot "nft does not work in a network namespace: $err"
err=$(ip -n "$probe" link add rbprobe0 type veth peer name rbprobe1 2>&1) || cannot "cannot create veth pairs: $err"
exit 0
