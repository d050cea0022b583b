// Package gitsafe is the only package in Tender that runs git.
//
// It reads untrusted repositories without ever executing anything they
// configure. A source (a local clone, a git bundle or a fast-export stream)
// is first copied or imported as plain bytes into a private directory that
// holds Tender's own minimal config and no hooks; every git command then goes
// through one hardened runner with a scrubbed environment, fixed -c overrides
// and --end-of-options before revisions. Workspaces are written from git
// objects at an exact commit, and candidate patches are parsed and their
// paths validated before git ever sees them.
//
// gitsafe must never run git against a source's own .git, never let an
// inherited GIT_* variable reach git, never write outside the directory it
// was given, and never leave a partly applied patch behind.
package gitsafe
