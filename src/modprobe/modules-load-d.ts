// Where systemd-modules-load reads the modules to load at boot.

/** modules-load.d(5) search path, highest precedence first (the same scheme as sysctl.d). */
export const MODULES_LOAD_DIRS = [
  '/etc/modules-load.d',
  '/run/modules-load.d',
  '/usr/local/lib/modules-load.d',
  '/usr/lib/modules-load.d',
  '/lib/modules-load.d',
] as const;
