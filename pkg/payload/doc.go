// Package payload stores the manifests of a large ManifestWork as
// content-addressed ManifestChunks and puts them together again.
//
// The payload is the manifests' compact JSON, one manifest a line. Split
// cuts it into chunks after whole manifests where it can, choosing the cut
// points from the manifests' own content, so that changing one manifest
// changes the chunk that holds it and leaves the others, and their names,
// as they were. A manifest larger than a chunk is cut at the chunk size.
// Each chunk is named by the SHA-256 of its uncompressed bytes and stored
// gzip-compressed when that makes it smaller.
//
// Load fetches the chunks of a ManifestPayload one at a time, checks each
// against its digest and size before it uses any of it, and returns the
// manifests only when every chunk is present and verified; otherwise it
// reports how much of the payload is there, so that a caller keeps what it
// applied before. Scan does the same without keeping the manifests: it
// hands them over one at a time and returns an Index of where each lies
// among the chunks, with which Index.Read reads again only the chunks that
// hold the manifests a caller wants, so that memory holds one chunk and one
// manifest at a time whatever the payload's size. The writer and the work agent both call this package: the
// rule for a chunk's name and content lives here once.
package payload
