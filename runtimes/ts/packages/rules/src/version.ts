/** The engine release line this runtime implements (spec/v1/README.md). */
export const VERSION = "1.0.0-alpha.2";
/** The specification version. */
export const SPEC_VERSION = "1.0";
