// Package payloadgc deletes the ManifestChunks that nothing in their
// namespace lists any more: no ManifestWork, no ManifestWorkReplicaSet's
// template and no revision a set keeps for undo. A chunk is deleted only
// once it has been unlisted for its whole grace period after it was
// created, so that a writer that writes a payload's chunks before the work
// that lists them never sees them go. See docs/design/large-payloads.md.
package payloadgc
