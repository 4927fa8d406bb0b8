// Kept apart so `--version`, `--help` and error documents load nothing else.
export const TOOL_VERSION = '0.1.0';

/** Bumped on any incompatible change of the JSON document's shape. */
export const FORMAT_VERSION = '1.0';

/** Where the Debian package installs its default desired state (docs/packaging.md); named by -f's help and by the error for a missing file. */
export const PACKAGED_DESIRED_STATE = '/usr/share/k8s-host-reconcile/desired-state.yaml';
