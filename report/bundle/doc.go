// Package bundle seals and verifies Tender's evidence bundle: a directory of grading outputs
// whose every file, together with the inputs that produced it (suite files, patches, assets,
// image ids, the tool version and the options), is listed by sha256 digest as the subjects of
// an in-toto v1 Statement, wrapped in a DSSE envelope and optionally signed with ed25519.
//
// The envelope is written as bundle.dsse.json at the top of the bundle. Its payload type is
// "application/vnd.in-toto+json" and its statement's predicate type is PredicateType
// ("https://tender.dev/evidence/v1"). The predicate is a JSON object with these fields, all of
// them strings or string maps:
//
//	tool      the grader that produced the bundle, e.g. "tender v0.3.0"
//	options   grading options that change results (backend, shard, ...), name -> value
//	images    verifier images, name -> image id ("sha256:<hex>")
//	created   when the bundle was sealed, RFC 3339 in UTC (volatile)
//	volatile  the predicate fields that may differ between two seals of the same inputs
//	          and files; today only "created"
//
// Subjects are named in two ways. A file of the bundle is named by its slash-separated path
// relative to the bundle directory ("results.json", "pairs/p1/target.log"). An input that
// lives outside the bundle is named "input:<what>": "input:suite/tender.yaml" (any path the
// grader chose for a suite, patch or asset file), "input:image/<name>" (digest: the hex of the
// image id), "input:tool" (digest: sha256 of the tool string) and "input:options" (digest:
// sha256 of the options as compact JSON with sorted keys). Verify recomputes the last three
// from the predicate.
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
