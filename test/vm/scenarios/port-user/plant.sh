#!/bin/bash
# A lingering user's own service holds 6443 (issue 17): alice (UID 1000)
# lingers, so logind starts her manager (user@1000.service) at boot, and her
# manager starts api-server.service: enabled in default.target.wants and also
# wanted by her dev-stack.target (`Wants=` on line 3), which is enabled too.
# The unit file is in ~/.local/share/systemd/user, so a mask link in
# ~/.config/systemd/user can override it.
set -euo pipefail
root=${1:?usage: plant.sh ROOTFS}

echo 'alice:x:1000:1000:Alice:/home/alice:/bin/bash' >>"$root/etc/passwd"
echo 'alice:!:19000:0:99999:7:::' >>"$root/etc/shadow"
echo 'alice:x:1000:' >>"$root/etc/group"
mkdir -p "$root/var/lib/systemd/linger"
: >"$root/var/lib/systemd/linger/alice"

home="$root/home/alice"
share="$home/.local/share/systemd/user"
conf="$home/.config/systemd/user"
mkdir -p "$share" "$conf/default.target.wants"
cat >"$share/api-server.service" <<'UNIT'
[Unit]
Description=Alice's API test server

[Service]
ExecStart=/usr/bin/python3 -m http.server 6443
Restart=always
RestartSec=1

[Install]
WantedBy=default.target
UNIT
ln -s /home/alice/.local/share/systemd/user/api-server.service "$conf/default.target.wants/api-server.service"

cat >"$conf/dev-stack.target" <<'UNIT'
[Unit]
Description=Alice's development stack
Wants=api-server.service

[Install]
WantedBy=default.target
UNIT
ln -s /home/alice/.config/systemd/user/dev-stack.target "$conf/default.target.wants/dev-stack.target"
chown -R 1000:1000 "$home"
chmod 700 "$home"
