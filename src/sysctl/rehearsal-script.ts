// The program that runs inside the rehearsal's private mount + network
// namespace: a POSIX shell script, so no second node runtime starts
// (`unshare -m -n --propagation private -- env -i ... sh -c SCRIPT ...`). It
// is constant text: its arguments are the script itself, the mode, the outer
// process's pid, the number of trials, the tmpfs size and the two programs'
// paths, each used only as one quoted word; everything else (file contents,
// names, keys, values) arrives as a tar archive on stdin
// (rehearsal-archive.ts) and is only ever file data: no line of it is
// evaluated.
//
// What it does, refusing to go on if it is not in namespaces of its own:
// 1. a tmpfs on /tmp (in this mount namespace only) receives the archive:
//    per trial, one directory per sysctl.d directory and one file per single
//    file (/etc/sysctl.conf), its fstab, its start and seed values; the key
//    paths once;
// 2. per trial, `mount -a -T` of that trial's fstab bind-mounts each copy
//    read-only over the real path (a directory missing on this machine
//    appears through an overlay on its nearest existing ancestor, in this
//    mount namespace only, before the first trial's binds), so the programs
//    read only what the rehearsal laid out; a later trial's binds cover the
//    earlier ones;
// 3. per trial, in a network namespace of its own (the first trial in the
//    one unshare made, each later one in a fresh `unshare -n`): start values
//    unlike the wanted ones are written, systemd-sysctl runs, every key is
//    read by one `grep -H ''` over all their paths, the seed values
//    are written (what the running kernel holds after apply), `sysctl
//    --system` runs, and the keys are read again. Every key read or written
//    is under /proc/sys/net, which belongs to that namespace alone.
//
// Output, one record a line: "r T MODEL" then grep's "PATH:LINE" lines (the
// keys under MODEL in trial T; a key that cannot be read has no line), "w T MODEL LINE"
// (a line the program wrote on stderr), "e T BOOT SYSTEM" (the two exit
// statuses: the trial is complete).
export const REHEARSAL_SCRIPT = String.raw`
self=$1 mode=$2 outer=$3 trials=$4 size=$5 sd=$6 sysctl=$7
fail() { printf 'rehearsal: %s\n' "$1" >&2; exit 3; }
[ -e "/proc/$outer/ns/net" ] && [ -e "/proc/$outer/ns/mnt" ] || fail "no process $outer to compare namespaces with"
[ /proc/self/ns/net -ef "/proc/$outer/ns/net" ] && fail 'not in a network namespace of its own'
[ /proc/self/ns/mnt -ef "/proc/$outer/ns/mnt" ] && fail 'not in a mount namespace of its own'
# A path a key names: under /proc/sys/net, no ".." component.
guard() {
  case $1 in
    */../* | */..) fail "refusing key outside /proc/sys/net: $1" ;;
    /proc/sys/net/?*) ;;
    *) fail "refusing key outside /proc/sys/net: $1" ;;
  esac
}
# Pairs of lines, path then value, each written as sysctl -w writes it; a refused write is the kernel's answer, not an error.
assign() {
  while IFS= read -r p && IFS= read -r v; do
    guard "$p"
    { printf '%s\n' "$v" >"$p"; } 2>/dev/null
  done <"$1"
}
# Every key in one pass: one grep over all their paths (a /proc/sys/net file answers only a read at offset 0, so the
# shell's byte-at-a-time read would see its first character alone).
readall() {
  model=$1
  set --
  while IFS= read -r p; do
    guard "$p"
    set -- "$@" "$p"
  done </tmp/keys
  printf 'r %s %s\n' "$t" "$model"
  [ "$#" -eq 0 ] || grep -H '' "$@" 2>/dev/null
}
warnings() {
  while IFS= read -r l || [ -n "$l" ]; do printf 'w %s %s %s\n' "$t" "$1" "$l"; done <"/tmp/t$t/$1.err"
}
trial() {
  t=$1
  assign "/tmp/t$t/start"
  "$sd" --prefix=net >/dev/null 2>"/tmp/t$t/boot.err"
  b=$?
  [ "$b" -lt 126 ] || fail "$sd could not run (exit $b)"
  readall boot
  assign "/tmp/t$t/seed"
  "$sysctl" -q --system --pattern '^-?net[./]' >/dev/null 2>"/tmp/t$t/system.err"
  s=$?
  [ "$s" -lt 126 ] || fail "$sysctl could not run (exit $s)"
  readall system
  warnings boot
  warnings system
  printf 'e %s %s %s\n' "$t" "$b" "$s"
}
case $mode in
  trial) trial "$8"; exit 0 ;;
  setup) ;;
  *) fail "bad mode $mode" ;;
esac
mount -t tmpfs -o "mode=0700,size=$size" k8s-host-reconcile-rehearsal /tmp || fail 'cannot mount a tmpfs on /tmp'
tar -x -f - -C /tmp --no-same-owner || fail 'cannot unpack the layout'
t=0
while [ "$t" -lt "$trials" ]; do
  if [ -s "/tmp/t$t/fstab" ]; then mount -a -T "/tmp/t$t/fstab" || fail "cannot bind trial $t's copies"; fi
  if [ "$t" -eq 0 ]; then trial 0
  else unshare -n -- sh -c "$self" k8s-host-reconcile-rehearsal "$self" trial "$outer" "$trials" "$size" "$sd" "$sysctl" "$t" || fail "trial $t failed"
  fi
  t=$((t + 1))
done
`;
