#!/bin/sh
# The kernel as the oracle of a firewall evaluation: two network namespaces made here (ip netns, removed on exit),
# a veth between them, the ruleset ($2, loaded with $1: iptables-restore or nft -f) in the first, a listener there
# on each port and a TCP connect from the second. Prints "PORT accept|drop" per port (refused counts as drop).
# Nothing of this machine's own network is touched; the addresses (TEST-NET-1) exist only between the two.
set -e
A=fwa$$; B=fwb$$
cleanup() { ip netns del $A 2>/dev/null || true; ip netns del $B 2>/dev/null || true; }
trap cleanup EXIT
ip netns add $A; ip netns add $B
ip link add va netns $A type veth peer name vb netns $B
ip -n $A addr add 192.0.2.1/24 dev va; ip -n $A link set va up; ip -n $A link set lo up
ip -n $B addr add 192.0.2.2/24 dev vb; ip -n $B link set vb up; ip -n $B link set lo up
loader=$1; file=$2; shift 2
if [ "$loader" = iptables ]; then ip netns exec $A iptables-restore < "$file"; else ip netns exec $A nft -f "$file"; fi
ip netns exec $A python3 -c '
import socket,sys,time
ss=[]
for p in sys.argv[1:]:
  s=socket.socket(); s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1); s.bind(("192.0.2.1",int(p))); s.listen(); ss.append(s)
time.sleep(3)' "$@" &
sleep 0.3
ip netns exec $B python3 -c '
import socket,sys,concurrent.futures as cf
def t(p):
  s=socket.socket(); s.settimeout(1)
  try: s.connect(("192.0.2.1",int(p))); return p+" accept"
  except socket.timeout: return p+" drop"
  except ConnectionRefusedError: return p+" drop"
with cf.ThreadPoolExecutor(8) as ex:
  for r in ex.map(t, sys.argv[1:]): print(r)' "$@"
wait
