#!/bin/sh
# Runs inside the booted host as farm-steps.service (After=multi-user.target).
# Never `systemctl is-system-running --wait` here: this unit's own start job
# keeps the system "starting", so that would wait forever. Poll the job queue
# instead, and the ports the recipe says it listens on.
. /farm/env
out=/farm/out/$PHASE
mkdir -p "$out"

settle() {
  i=0
  while [ $i -lt 300 ]; do
    [ "$(systemctl list-jobs --no-legend 2>/dev/null | grep -vc farm-steps)" -eq 0 ] && break
    i=$((i + 1)); sleep 0.1
  done
}

record() {
  d="$out/$1"; mkdir -p "$d"
  ss -ltnpH > "$d/ss.txt" 2>&1
  for k in $KEYS; do printf '%s=%s\n' "$k" "$(sysctl -n "$k" 2>&1)"; done > "$d/sysctl.txt"
  systemctl list-units --all --no-legend --plain > "$d/units.txt" 2>&1
  ps -eo pid,ppid,user,args > "$d/ps.txt" 2>&1
  record_paths "$d"
  record_probes "$d"
}

# An entry's probes (/farm/probes.d/NAME, executable): what each prints, one file each (the judge compares it per
# phase). Run from node, as record_paths is: the tool reads this script (farm-steps.service runs it), and a program
# named by a shell variable would be one it cannot know, an unknown on every host.
record_probes() {
  node -e '
    const fs = require("fs"), cp = require("child_process");
    let names = [];
    try { names = fs.readdirSync("/farm/probes.d"); } catch {}
    for (const n of names) {
      const r = cp.spawnSync(`/farm/probes.d/${n}`, { encoding: "utf8" });
      fs.writeFileSync(`${process.argv[1]}/probe-${n}.txt`, `${r.stdout ?? ""}${r.stderr ?? ""}${r.error ? r.error.message : ""}`);
    }' "$1"
}

# Whether each path the boot-1 plan promises absent is there (lstat: a link counts), one SUBJECT=present|absent a line.
record_paths() {
  plan=/farm/out/boot1/plan.json
  [ -f "$plan" ] || return 0
  node -e '
    const fs = require("fs");
    const doc = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
    for (const p of doc.promises ?? []) {
      if (p.kind !== "path-absent") continue;
      let there = true;
      try { fs.lstatSync(p.subject); } catch { there = false; }
      console.log(`${p.subject}=${there ? "present" : "absent"}`);
    }' "$plan" > "$1/paths.txt" 2>&1
}

listening() { ss -ltnH "sport = :$1" | grep -q .; }

settle
if [ "$PHASE" = boot1 ]; then
  # The recipe's listeners must be up before the tool looks (or the recipe did not take).
  for p in $LISTENS; do
    i=0; while [ $i -lt 200 ] && ! listening "$p"; do i=$((i + 1)); sleep 0.1; done
  done
  sleep "$LATE"
  record before
  node /farm/reconcile.mjs --plan --json -f /farm/desired.yaml > "$out/plan.json" 2> "$out/plan.err"; echo $? > "$out/plan.rc"
  node /farm/reconcile.mjs --apply --json -f /farm/desired.yaml > "$out/apply.json" 2> "$out/apply.err"; echo $? > "$out/apply.rc"
  # What comes back by itself (a .path unit, Restart=, a supervisor) comes back within this.
  sleep "$AFTER"
  record after-apply
elif [ "$PHASE" = rollback ]; then
  # A third boot for entries that ask for it: --rollback of boot 1's apply, then what it brought back must listen again.
  sleep "$LATE"
  node /farm/reconcile.mjs --rollback --json -f /farm/desired.yaml > "$out/rollback.json" 2> "$out/rollback.err"; echo $? > "$out/rollback.rc"
  for p in $LISTENS; do
    i=0; while [ $i -lt 200 ] && ! listening "$p"; do i=$((i + 1)); sleep 0.1; done
  done
  record after-rollback
else
  sleep "$LATE"
  record at-boot
fi
journalctl -b --no-pager -o short-monotonic > "$out/journal.txt" 2>&1
echo done > "$out/done"
systemctl poweroff --no-block
