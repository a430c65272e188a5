#!/usr/bin/env bash
# Makes a local CA and one certificate for every process of a cluster, for mutual TLS between them
# (security.ssl.internal.*). Every process presents the same certificate, valid for the names and
# addresses the cluster's processes are reached at.
#   scripts/make-certs.sh DIR [NAME ...]     NAME: extra DNS names or IPs (e.g. compose service names)
# Writes DIR/ca.pem, DIR/cert.pem and DIR/key.pem (mode 0600), and prints the -D flags to use.
set -euo pipefail
if [[ $# -lt 1 ]]; then
  echo "usage: scripts/make-certs.sh DIR [NAME ...]" >&2
  exit 2
fi
command -v openssl >/dev/null || { echo "make-certs: openssl is not installed; apt-get install -y openssl" >&2; exit 1; }
dir=$1
shift
mkdir -p "$dir"
umask 077
san="DNS:localhost,IP:127.0.0.1"
for name in "$@"; do
  if [[ $name =~ ^[0-9.]+$ ]]; then san="$san,IP:$name"; else san="$san,DNS:$name"; fi
done
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 825 \
  -subj "/CN=rebound cluster CA" -keyout "$dir/ca-key.pem" -out "$dir/ca.pem" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
  -subj "/CN=rebound" -keyout "$dir/key.pem" -out "$dir/cert.csr" 2>/dev/null
openssl x509 -req -in "$dir/cert.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca-key.pem" -CAcreateserial -days 825 \
  -extfile <(printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth,clientAuth\n' "$san") -out "$dir/cert.pem" 2>/dev/null
rm -f "$dir/cert.csr" "$dir/ca.srl"
abs=$(cd "$dir" && pwd)
echo "-D security.ssl.internal.enabled=true -D security.ssl.internal.ca=$abs/ca.pem -D security.ssl.internal.cert=$abs/cert.pem -D security.ssl.internal.key=$abs/key.pem"
