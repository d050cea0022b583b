// Package scratch makes Tender's temporary directories and removes the ones a dead process
// left behind. Each directory it makes holds an owner file naming the process that made it
// (host, boot id, pid and the pid's start time), the way verifier containers carry labels, so
// that the next run or `tender gc` can tell a leftover of a killed run from a directory in
// use. It never removes a directory whose owner is alive or on another host, nor one without an
// owner file unless it is empty and its name (which MkdirTemp makes from its pid and start
// time) names a dead maker: what a kill leaves as a directory is made or removed. And
// it never deletes through a mount point. Remove deletes the owner file last.
package scratch
