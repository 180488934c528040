#!/usr/bin/env bash
# A LAN on one machine (root): K rank hosts and one coordinator host, each a network namespace with its own
# address, joined by a Linux bridge in a switch namespace; every link shaped with tc tbf in both directions.
# Runs one zerowire job there and removes every namespace, link and process it made on exit, Ctrl-C or failure.
#
#   sudo deploy/lan/lan.sh [--hosts 4] [--procs 1] [--rate 1gbit] [--] [coordinator run options...]
#   e.g. deploy/lan/lan.sh --hosts 4 --rate 100mbit -- --scheme dp,zero3 --steps 10 --out /tmp/lan.json
#
# Addresses: coordinator 10.250.0.1, rank hosts 10.250.0.2 ... (only inside the namespaces made here).
# --procs K runs K ranks on each host: the ring keeps a host's ranks together.
# It prints "lan: ready <switch-ns> <coordinator-ns> <host-ns>..." on stderr once the network is up.
set -euo pipefail

hosts=4
procs=1
rate=1gbit
while [ $# -gt 0 ]; do
  case "$1" in
    --hosts) hosts=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --procs) procs=$2; shift 2 ;;
    --) shift; break ;;
    *) break ;;
  esac
done
[[ "$hosts" =~ ^[1-9][0-9]?$ ]] && [ "$hosts" -le 60 ] || { echo "lan.sh: --hosts must be 1..60, got $hosts" >&2; exit 2; }
[[ "$procs" =~ ^[1-9]$ ]] || { echo "lan.sh: --procs must be 1..9, got $procs" >&2; exit 2; }
[[ "$rate" =~ ^[0-9]+(\.[0-9]+)?[kmg]?bit$ ]] || { echo "lan.sh: --rate must look like 100mbit, 1gbit, 10gbit; got $rate" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "lan.sh: needs root (network namespaces, tc)" >&2; exit 2; }
command -v ip >/dev/null && command -v tc >/dev/null || { echo "lan.sh: needs iproute2 (ip, tc)" >&2; exit 2; }

here=$(cd "$(dirname "$0")" && pwd)
cli="$here/../../dist/cli/zerowire.js"
[ -f "$cli" ] || { echo "lan.sh: $cli is missing: run npm run build" >&2; exit 2; }
node=${NODE:-node}

id="zw$$"
sw="$id-sw"
names=("$id-c")
for i in $(seq 0 $((hosts - 1))); do names+=("$id-h$i"); done
made=()
pids=()

cleanup() {
  local code=$?
  trap - EXIT INT TERM
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  sleep 0.2
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  # Deleting a namespace kills nothing, so processes go first; veths die with their namespace.
  for ns in "${made[@]}"; do
    for p in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$p" 2>/dev/null || true; done
    ip netns del "$ns" 2>/dev/null || true
  done
  exit "$code"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ip netns add "$sw"; made+=("$sw")
ip -n "$sw" link add br0 type bridge
ip -n "$sw" link set br0 up
n=0
for ns in "${names[@]}"; do
  ip netns add "$ns"; made+=("$ns")
  ip link add "${id}a$n" type veth peer name "${id}b$n"
  ip link set "${id}a$n" netns "$ns"
  ip -n "$ns" link set "${id}a$n" name eth0
  ip link set "${id}b$n" netns "$sw"
  ip -n "$sw" link set "${id}b$n" master br0 up
  ip -n "$ns" addr add "10.250.0.$((n + 1))/24" dev eth0
  ip -n "$ns" link set lo up
  ip -n "$ns" link set eth0 up
  # Shape both directions of the link: the host's sends, and what the switch sends to it.
  ip netns exec "$ns" tc qdisc add dev eth0 root tbf rate "$rate" burst 256kb latency 50ms
  ip netns exec "$sw" tc qdisc add dev "${id}b$n" root tbf rate "$rate" burst 256kb latency 50ms
  n=$((n + 1))
done
echo "lan: ready $sw ${names[*]}" >&2

ip netns exec "${names[0]}" "$node" "$cli" coordinator --world "$((hosts * procs))" --host 10.250.0.1 --port 7070 "$@" &
coord=$!
pids+=("$coord")
# With --procs K, one rank per host in turn (a moment apart), so the ranks of a host join interleaved with
# the others' and it is the coordinator that puts them next to each other in the ring.
for p in $(seq 1 "$procs"); do
  for i in $(seq 1 "$hosts"); do
    ip netns exec "${names[$i]}" "$node" "$cli" rank --coordinator ws://10.250.0.1:7070 --iface eth0 &
    pids+=($!)
    [ "$procs" -eq 1 ] || sleep 0.3
  done
done
status=0
wait "$coord" || status=$?
for p in "${pids[@]:1}"; do wait "$p" || { [ "$status" -ne 0 ] || status=$?; }; done
exit "$status"
