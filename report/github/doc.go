// Package github publishes Tender results to GitHub: a check run with annotations, created
// through a token client that refuses redirects, and the approval check that gates it. When
// the token may not create check runs (a 403, as on pull requests from forks) it falls back to
// workflow-command annotations and the job summary.
//
// It must never follow a redirect, never send the token over plain HTTP to a host that is not
// loopback, never send the token to any host but the configured API host, and never let the
// token reach a log line, an error message or a file. It never decides on its own to publish:
// callers verify approval first (see Client.Approval) and otherwise print the dry-run payload
// (see Plan.WriteDryRun).
package github
