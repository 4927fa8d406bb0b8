// An init script as Debian's packages ship one for update-rc.d and
// systemd-sysv-generator: the LSB header both read, then `body`.
export function lsbInitScript(name: string, description: string, body: string): string {
  return `#!/bin/sh
### BEGIN INIT INFO
# Provides:          ${name}
# Required-Start:    $remote_fs
# Required-Stop:     $remote_fs
# Default-Start:     2 3 4 5
# Default-Stop:      0 1 6
# Short-Description: ${description}
### END INIT INFO
${body}`;
}
