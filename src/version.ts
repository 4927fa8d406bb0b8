// Kept apart so `--version`, `--help` and error documents load nothing else.
export const TOOL_VERSION = '0.1.0';

/** Bumped on any incompatible change of the JSON document's shape. */
export const FORMAT_VERSION = '1.0';

/**
 * The Debian package's desired state, a conffile (docs/packaging.md): the
 * packaged program's default -f, named by -f's help and by the error for a
 * missing file. The same path as the first boot's (IMAGE_DESIRED), so a host
 * with the package and an image it baked read one file.
 */
export const PACKAGED_DESIRED_STATE = '/etc/k8s-host-reconcile/desired-state.yaml';

/** Where the Debian package installs the bundle (/usr/bin/k8s-host-reconcile links to it): a run whose own file is this one is the packaged program. */
export const PACKAGED_BUNDLE = '/usr/libexec/k8s-host-reconcile/reconcile.mjs';

/** The name the Debian package installs the program as (/usr/bin/k8s-host-reconcile); the npm bin is `reconcile`. */
export const PACKAGED_PROGRAM_NAME = 'k8s-host-reconcile';
