// Command tender grades batches of issue/patch pairs in hardened verifiers and writes a signed
// evidence bundle. main only wires signals and exit codes; the work starts in run.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Environ(), os.Stdin, os.Stdout, os.Stderr)
	code := exitCode(ctx, err) // before stop(), which cancels ctx
	stop()
	if err != nil && code != exitOK {
		fmt.Fprintln(os.Stderr, "tender:", err)
	}
	os.Exit(code)
}
