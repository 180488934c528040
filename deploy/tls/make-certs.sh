#!/usr/bin/env bash
# A cluster CA and one certificate it signs, for a zerowire run over TLS (--tls-cert, --tls-key, --tls-ca).
# Every process of the run uses the same three files: the coordinator serves wss:// with the certificate,
# every rank serves its ring port with it, and every connection is checked against the CA.
#
#   deploy/tls/make-certs.sh DIR [NAME ...]
#
# NAMEs are what ranks dial the coordinator by (DNS names or IP addresses); the certificate must carry the
# one in --coordinator (or MASTER_ADDR). Default: coordinator (Compose, Swarm), zerowire-coordinator
# (Kubernetes), localhost, 127.0.0.1 (zerowire local) and 10.250.0.1 (deploy/lan/lan.sh).
# Writes DIR/ca.pem, DIR/cert.pem, DIR/key.pem (the CA's own key, DIR/ca.key, can sign more; keep it apart).
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 DIR [NAME ...]" >&2; exit 2; }
command -v openssl >/dev/null || { echo "make-certs.sh: needs openssl" >&2; exit 2; }
dir=$1
shift
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(coordinator zerowire-coordinator localhost 127.0.0.1 10.250.0.1)
mkdir -p "$dir"
[ ! -e "$dir/key.pem" ] || { echo "make-certs.sh: $dir/key.pem exists; not overwriting" >&2; exit 2; }
san=()
for n in "${names[@]}"; do
  if [[ "$n" =~ ^[0-9.]+$ || "$n" == *:* ]]; then san+=("IP:$n"); else san+=("DNS:$n"); fi
done
san_list=$(IFS=,; echo "${san[*]}")
umask 077
openssl req -x509 -newkey rsa:3072 -nodes -days 365 -subj '/CN=zerowire cluster CA' -keyout "$dir/ca.key" -out "$dir/ca.pem" 2>/dev/null
openssl req -newkey rsa:3072 -nodes -subj "/CN=${names[0]}" -keyout "$dir/key.pem" -out "$dir/cert.csr" 2>/dev/null
printf 'subjectAltName=%s\n' "$san_list" >"$dir/san.ext"
openssl x509 -req -in "$dir/cert.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial -days 365 -extfile "$dir/san.ext" -out "$dir/cert.pem" 2>/dev/null
rm -f "$dir/cert.csr" "$dir/san.ext" "$dir/ca.srl"
chmod 644 "$dir/ca.pem" "$dir/cert.pem"
echo "make-certs.sh: $dir/ca.pem, $dir/cert.pem ($san_list), $dir/key.pem"
