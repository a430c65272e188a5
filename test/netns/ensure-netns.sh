#!/usr/bin/env bash
# Makes `npm run test:netns` runnable: root, iproute2 (ip netns), nftables (partitions),
# util-linux (nsenter: storage cuts) and etcd-server (the etcd scenarios), installing what is
# missing with apt-get. Exit 0 when all is there. Exit 1, with one line on stderr saying why, only
# where the tests cannot run here: not root, no apt-get or a failed install, or a missing
# capability or kernel feature detected and named. Exit 2, with one line, when the tools are
# installed and allowed but do not work: a failure to look into, not a machine to skip.
set -uo pipefail
say() { echo "ensure-netns: $*"; }
cannot() { echo "ensure-netns: the netns tests cannot run here: $*" >&2; exit 1; }
broken() { echo "ensure-netns: the netns tools are installed but do not work: $*" >&2; exit 2; }
[ "$(id -u)" = 0 ] || cannot "not root (ip netns needs CAP_SYS_ADMIN and CAP_NET_ADMIN)"
[ "$(uname -s)" = Linux ] || cannot "not Linux"
# Root in a container may lack the capabilities (bits of CapEff): then nothing here can work.
capeff=$(awk '/^CapEff:/ { print $2 }' /proc/self/status)
for cap in 12:CAP_NET_ADMIN 21:CAP_SYS_ADMIN; do
  (( (16#$capeff >> ${cap%%:*}) & 1 )) || cannot "no ${cap#*:} (an unprivileged container?)"
done
[ -e /proc/self/ns/net ] || cannot "the kernel has no network namespaces (no /proc/self/ns/net)"

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

# The capabilities are there (above): a failure now is the tools', or a kernel feature missing,
# which the kernel says as "not supported" (no nf_tables, no veth driver).
unsupported() { [[ $1 == *"not supported"* || $1 == *"Unknown device type"* ]]; }
probe="rb-$$-probe"
err=$(ip netns add "$probe" 2>&1) || broken "ip netns add fails: $err"
trap 'ip netns del "$probe" 2>/dev/null' EXIT
if ! err=$(ip netns exec "$probe" nft list tables 2>&1); then
  unsupported "$err" && cannot "the kernel has no nf_tables: $err"
  broken "nft does not work in a network namespace: $err"
fi
if ! err=$(ip -n "$probe" link add rbprobe0 type veth peer name rbprobe1 2>&1); then
  unsupported "$err" && cannot "the kernel has no veth driver: $err"
  broken "cannot create veth pairs: $err"
fi
exit 0
