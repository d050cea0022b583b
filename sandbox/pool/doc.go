// Package pool is a sandbox.Backend that spreads checks over several engines: each check goes
// to the least busy engine still in the pool; an engine that stops answering is taken out
// with one line, and the check it was running is run again on another engine, once per
// engine lost, so every check ends with exactly one result. A check is a pure function of
// its inputs, so running it again is safe; the attempt on the lost engine is discarded.
//
// It also gives each engine the same images at the start (copying an image from an engine
// that has it, with no registry) and probes each engine's hardening before it takes a check.
//
// The package is engine-free: it never imports a container engine's SDK, and knows its
// members only through the interfaces here. It must never return two results for one check,
// never hand a check to an engine it has taken out, and never let an engine that failed its
// hardening probe run a check.
package pool
