// A SHA-256 hash, with node:crypto loaded on first use: ~5 ms of a start-up that hashes nothing
// (`mcp list` in a workspace with nothing of the repository's to trust), where a static import
// loads it in every process that takes one of the modules that can hash.

/** A new SHA-256 hash (node:crypto's). */
export const sha256Hash = () => process.getBuiltinModule('node:crypto').createHash('sha256');
