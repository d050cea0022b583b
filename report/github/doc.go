// Package github publishes Tender results to GitHub: a check run with annotations, and
// optionally a pull-request comment, created through a token client that refuses redirects,
// and the approval check that gates them.
//
// The comment (BuildComment, Client.UpsertComment) starts with a hidden marker derived from
// the check run's name. It is created once and then updated in place: a later publication
// finds the newest comment that starts with the marker and was written by a bot (as every
// App token writes), so a person who quotes the marker keeps their comment. A create whose
// answer was lost is looked for before any retry, so a retry never makes a second comment.
// When the results were compared with a baseline, the check run's text and the comment show
// what regressed, improved, changed, appeared or went.
//
// Publishing is idempotent: a check run carries the bundle digest as its external_id, and
// before creating one, or retrying a create whose answer was lost, the client looks for the
// run it made already and reuses it, so a retry or a second run of publish updates one run.
// A failure after the run exists completes it as neutral (cancelled when interrupted) with a
// note, never leaving it in progress. Text is capped in bytes, as GitHub counts it. The client
// waits as GitHub asks after rate limits (at least a minute after a secondary limit that names
// no wait), leaves a second between mutating requests, and bounds its total wait. When the
// token may not create check runs (a 403, as on pull requests from forks) it falls back to as
// many workflow-command annotations as GitHub shows in one step, and the job summary.
//
// It must never follow a redirect, never send the token over plain HTTP to a host that is not
// loopback, never send the token to any host but the configured API host, and never let the
// token reach a log line, an error message or a file. It never decides on its own to publish:
// callers verify approval first (see Client.CheckApproval) and otherwise print the dry-run
// payload (see Plan.WriteDryRun).
package github
