// Command tender grades batches of issue/patch pairs in hardened verifiers and writes a signed
// evidence bundle. main only wires signals; the program is internal/cli.
package main

import (
	"context"
	"os"

	"github.com/tender-grader/tender/internal/cli"
)

func main() {
	ctx, stop := cli.NotifyContext(context.Background(), os.Stderr)
	code := cli.Main(ctx, version, os.Args[1:], os.Environ(), os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
