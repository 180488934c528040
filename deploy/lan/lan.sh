#!/usr/bin/env bash
# A LAN on one machine (root): K rank hosts and one coordinator host, each a network namespace with its own
# address, joined by a Linux bridge in a switch namespace; every link shaped with tc tbf in both directions.
# Runs one zerowire job there and removes every namespace, link and process it made on exit, Ctrl-C or failure.
#
#   deploy/lan/lan.sh [--hosts 4] [--procs 1] [--rate 1gbit] [--rate-host I=RATE] [--cpu-host I=CORES]
#                          [--tls-cert F --tls-key F [--tls-ca F]] [--capture I=FILE] [--] [coordinator run options...]
#   e.g. deploy/lan/lan.sh --hosts 4 --rate 100mbit -- --scheme dp,zero3 --steps 10 --out /tmp/lan.json
#
# Addresses: coordinator 10.250.0.1, rank hosts 10.250.0.2 ... (only inside the namespaces made here).
# Rank hosts are numbered from 0 (host I has address 10.250.0.(I+2)); the options that name one may repeat.
# --procs K       K ranks on each host: the ring keeps a host's ranks together.
# --rate-host     host I's link at RATE instead of --rate (both directions): a slow NIC or cable.
# --cpu-host      host I's ranks share CORES cores' worth of CPU (a CFS quota, e.g. 0.3): a slow host.
# --tls-*         the coordinator and every rank run TLS (the certificate must name IP 10.250.0.1).
# --links         run `zerowire links` (measure the links, train nothing) instead of `zerowire coordinator`.
# --exec          run the command after -- on every rank host instead of zerowire, K per host, with ZW_RANK,
#                 ZW_WORLD and ZW_MASTER (host 0's address) in its environment: a peer (torch DDP) on the same LAN.
# --capture       tcpdump on host I's eth0 into FILE (pcap, whole packets) while the run lasts.
# It prints "lan: ready <switch-ns> <coordinator-ns> <host-ns>..." on stderr once the network is up.
set -euo pipefail

hosts=4
procs=1
rate=1gbit
declare -A host_rate=() host_cpu=() capture=()
tls=()
command=coordinator
rate_re='^[0-9]+(\.[0-9]+)?[kmg]?bit$'
while [ $# -gt 0 ]; do
  case "$1" in
    --hosts) hosts=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --procs) procs=$2; shift 2 ;;
    --rate-host)
      [[ "$2" =~ ^([0-9]+)=(.+)$ && "${BASH_REMATCH[2]}" =~ $rate_re ]] || { echo "lan.sh: --rate-host must look like 2=100mbit, got $2" >&2; exit 2; }
      host_rate[${2%%=*}]=${2#*=}; shift 2 ;;
    --cpu-host)
      [[ "$2" =~ ^([0-9]+)=([0-9]*\.?[0-9]+)$ ]] || { echo "lan.sh: --cpu-host must look like 2=0.3 (cores), got $2" >&2; exit 2; }
      host_cpu[${2%%=*}]=${2#*=}; shift 2 ;;
    --capture)
      [[ "$2" =~ ^([0-9]+)=(.+)$ ]] || { echo "lan.sh: --capture must look like 1=/tmp/h1.pcap, got $2" >&2; exit 2; }
      capture[${2%%=*}]=${2#*=}; shift 2 ;;
    --tls-cert|--tls-key|--tls-ca)
      [ -r "$2" ] || { echo "lan.sh: $1 $2: not a readable file" >&2; exit 2; }
      tls+=("$1" "$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"); shift 2 ;;
    --links) command=links; shift ;;
    --exec) command=exec; shift ;;
    --) shift; break ;;
    *) break ;;
  esac
done
[[ "$hosts" =~ ^[1-9][0-9]?$ ]] && [ "$hosts" -le 60 ] || { echo "lan.sh: --hosts must be 1..60, got $hosts" >&2; exit 2; }
[[ "$procs" =~ ^[1-9]$ ]] || { echo "lan.sh: --procs must be 1..9, got $procs" >&2; exit 2; }
[[ "$rate" =~ $rate_re ]] || { echo "lan.sh: --rate must look like 100mbit, 1gbit, 10gbit; got $rate" >&2; exit 2; }
for i in "${!host_rate[@]}" "${!host_cpu[@]}" "${!capture[@]}"; do
  [ "$i" -lt "$hosts" ] || { echo "lan.sh: host $i does not exist (--hosts $hosts: hosts 0..$((hosts - 1)))" >&2; exit 2; }
done
[ ${#capture[@]} -eq 0 ] || command -v tcpdump >/dev/null || { echo "lan.sh: --capture needs tcpdump (apt-get install tcpdump)" >&2; exit 2; }
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
cgroups=()
ranks=()

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
  for g in "${cgroups[@]}"; do rmdir "$g" 2>/dev/null || true; done
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
  r=$rate
  [ "$n" -eq 0 ] || r=${host_rate[$((n - 1))]:-$rate}
  ip netns exec "$ns" tc qdisc add dev eth0 root tbf rate "$r" burst 256kb latency 50ms
  ip netns exec "$sw" tc qdisc add dev "${id}b$n" root tbf rate "$r" burst 256kb latency 50ms
  n=$((n + 1))
done
# A CPU quota per slow host, on whichever cgroup version the machine mounts. (Ranks join it from out here:
# inside `ip netns exec` /sys is the namespace's own, without the cgroup file system.)
declare -A group_of=()
for i in "${!host_cpu[@]}"; do
  quota=$(awk -v c="${host_cpu[$i]}" 'BEGIN { q = int(c * 100000); if (q < 1000) q = 1000; print q }')
  if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
    g=/sys/fs/cgroup/$id-h$i
    mkdir "$g" && echo "$quota 100000" >"$g/cpu.max"
  else
    g=/sys/fs/cgroup/cpu/$id-h$i
    mkdir "$g" && echo 100000 >"$g/cpu.cfs_period_us" && echo "$quota" >"$g/cpu.cfs_quota_us"
  fi
  cgroups+=("$g")
  group_of[$i]=$g
done
for i in "${!capture[@]}"; do
  ip netns exec "${names[$((i + 1))]}" tcpdump -i eth0 -s 0 -U -w "${capture[$i]}" tcp 2>/dev/null &
  pids+=($!)
done
[ ${#capture[@]} -eq 0 ] || sleep 1 # tcpdump is listening before the first byte
echo "lan: ready $sw ${names[*]}" >&2

if [ "$command" = exec ]; then
  [ $# -gt 0 ] || { echo "lan.sh: --exec needs a command after --" >&2; exit 2; }
  for i in $(seq 1 "$hosts"); do
    for p in $(seq 1 "$procs"); do
      ip netns exec "${names[$i]}" env ZW_RANK=$(((i - 1) * procs + p - 1)) ZW_WORLD=$((hosts * procs)) ZW_MASTER=10.250.0.2 "$@" &
      pids+=($!)
      g=${group_of[$((i - 1))]:-}
      [ -z "$g" ] || echo $! >"$g/cgroup.procs"
      ranks+=($!)
    done
  done
  status=0
  for p in "${ranks[@]}"; do wait "$p" || { [ "$status" -ne 0 ] || status=$?; }; done
  exit "$status"
fi

scheme=ws
[ ${#tls[@]} -eq 0 ] || scheme=wss
ip netns exec "${names[0]}" "$node" "$cli" "$command" --world "$((hosts * procs))" --host 10.250.0.1 --port 7070 "${tls[@]}" "$@" &
coord=$!
pids=("$coord" "${pids[@]}")
# With --procs K, one rank per host in turn (a moment apart), so the ranks of a host join interleaved with
# the others' and it is the coordinator that puts them next to each other in the ring.
for p in $(seq 1 "$procs"); do
  for i in $(seq 1 "$hosts"); do
    ip netns exec "${names[$i]}" "$node" "$cli" rank --coordinator "$scheme://10.250.0.1:7070" --iface eth0 "${tls[@]}" &
    pids+=($!)
    g=${group_of[$((i - 1))]:-}
    [ -z "$g" ] || echo $! >"$g/cgroup.procs" # ip netns exec execs node: the same process
    ranks+=($!)
    [ "$procs" -eq 1 ] || sleep 0.3
  done
done
status=0
wait "$coord" || status=$?
for p in "${ranks[@]}"; do wait "$p" || { [ "$status" -ne 0 ] || status=$?; }; done
exit "$status"
