// Kept apart so `--version`, `--help` and error documents load nothing else.
export const TOOL_VERSION = '0.1.0';

/** Bumped on any incompatible change of the JSON document's shape. */
export const FORMAT_VERSION = '1.0';
