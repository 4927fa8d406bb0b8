#!/bin/sh
# firewall-oracle.sh for IPv6: the same two network namespaces made here (removed on exit) and veth, with
# documentation addresses (2001:db8::/32, RFC 3849, nodad so they are usable at once), the ruleset ($2, loaded with
# $1: ip6tables-restore or nft -f) in the first, a listener there on each port and a TCP connect from the second.
# Neighbours are static. Prints "PORT accept|drop" per port (refused counts as drop). Nothing of this machine's own network is touched.
set -e
A=fw6a$$; B=fw6b$$
cleanup() { ip netns del $A 2>/dev/null || true; ip netns del $B 2>/dev/null || true; }
trap cleanup EXIT
ip netns add $A; ip netns add $B
ip link add va netns $A type veth peer name vb netns $B
ip -n $A -6 addr add 2001:db8::1/64 dev va nodad; ip -n $A link set va up; ip -n $A link set lo up
ip -n $B -6 addr add 2001:db8::2/64 dev vb nodad; ip -n $B link set vb up; ip -n $B link set lo up
# Static neighbours: what is judged is the TCP connection, not whether a ruleset lets neighbour discovery through.
ip -n $A -6 neigh add 2001:db8::2 lladdr "$(ip -n $B -br link show vb | awk '{print $3}')" dev va nud permanent
ip -n $B -6 neigh add 2001:db8::1 lladdr "$(ip -n $A -br link show va | awk '{print $3}')" dev vb nud permanent
loader=$1; file=$2; shift 2
if [ "$loader" = iptables ]; then ip netns exec $A ip6tables-restore < "$file"; else ip netns exec $A nft -f "$file"; fi
ip netns exec $A python3 -c '
import socket,sys,time
ss=[]
for p in sys.argv[1:]:
  s=socket.socket(socket.AF_INET6); s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1); s.bind(("2001:db8::1",int(p))); s.listen(); ss.append(s)
time.sleep(3)' "$@" &
sleep 0.5
ip netns exec $B python3 -c '
import socket,sys,concurrent.futures as cf
def t(p):
  s=socket.socket(socket.AF_INET6); s.settimeout(1)
  try: s.connect(("2001:db8::1",int(p))); return p+" accept"
  except socket.timeout: return p+" drop"
  except ConnectionRefusedError: return p+" drop"
with cf.ThreadPoolExecutor(8) as ex:
  for r in ex.map(t, sys.argv[1:]): print(r)' "$@"
wait
