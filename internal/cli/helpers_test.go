package cli

// Helpers shared by the CLI's tests. Each is defined here once; those the end-to-end tests in
// integration/cli use too are in internal/clitest.

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
)

// repoRoot is the module root, seen from this package's directory (tests run there).
const repoRoot = "../.."

func runTender(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	ctx := context.Background()
	err := run(ctx, "dev", args, []string{"PATH=" + os.Getenv("PATH")}, strings.NewReader(""), &stdout, &stderr)
	if err != nil {
		stderr.WriteString("tender: " + err.Error() + "\n")
	}
	return stdout.String(), stderr.String(), exitCode(ctx, err)
}
