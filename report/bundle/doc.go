// Package bundle seals and verifies Tender's evidence bundle: a directory of grading outputs
// whose every file is listed by sha256 digest as the subjects of an in-toto v1 Statement,
// with the inputs that produced it (suite files, patches, assets, image ids) in the
// predicate as resolved dependencies, the way SLSA provenance lists them; wrapped in a DSSE
// envelope and optionally signed with ed25519.
//
// The subjects are the bundle's outputs only, so a tool that accepts a file when its digest
// is a subject (cosign verify-blob-attestation --check-claims, a policy engine) accepts
// exactly the bundle's own files, never an input.
//
// The envelope is written as bundle.dsse.json at the top of the bundle. Its payload type is
// "application/vnd.in-toto+json" and its statement's predicate type is PredicateType
// ("https://tender.dev/evidence/v2"). The predicate is a JSON object with these fields:
//
//	tool                  the grader that produced the bundle, e.g. "tender v0.3.0"
//	options               grading options that change results (backend, shard, ...), name -> value
//	resolvedDependencies  every input, as in-toto ResourceDescriptors {name, digest: {sha256}},
//	                      sorted by name: "suite/<path>" for a file of the suite (any path the
//	                      grader chose for a suite, patch, asset or repository file) and
//	                      "image/<name>" for a verifier image (digest: the hex of its image id).
//	                      No uri: suite files are paths inside the suite, and images are local
//	                      builds with no address to fetch them from.
//	created               when the bundle was sealed, RFC 3339 in UTC (volatile)
//	volatile              the predicate fields that may differ between two seals of the same
//	                      inputs and files; today only "created"
//
// A file of the bundle is named by its slash-separated path relative to the bundle directory
// ("results.json", "pairs/p1/target.log"). A bundle of the first format (predicate type
// PredicateTypeV1, inputs as "input:..." subjects) is refused with ErrOldFormat, which says
// to grade again or to verify it with the release that sealed it.
//
// Two seals of the same files and inputs give byte-identical statements apart from the
// volatile fields: subjects are sorted by name and the JSON has sorted keys and no spaces.
// ed25519 signatures are deterministic too, so with the same clock the whole envelope is
// byte-identical.
//
// The package never follows a symlink, never opens a special file (FIFO, device, socket),
// never reads outside the bundle directory, and never trusts the envelope it reads back: the
// envelope is size-capped and strictly decoded, and every subject path must be relative and
// clean. It never writes anything but bundle.dsse.json (and key files in GenerateKey), and it
// never puts key material in an error.
package bundle
