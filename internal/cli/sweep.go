package cli

import (
	"fmt"

	"github.com/tender-grader/tender/internal/scratch"
)

// sweepScratch removes the temporary directories of dead runs (snapshots, workspaces, image
// rootfs) from os.TempDir(), as the engine sweep removes their containers, and says so.
func sweepScratch(inv *invocation) []string {
	removed, err := scratch.Sweep("")
	if err != nil {
		fmt.Fprintln(inv.Stderr, "tender: sweeping temporary directories of dead runs:", err)
	}
	if len(removed) > 0 {
		fmt.Fprintf(inv.Stderr, "tender: removed %d temporary director(ies) left by dead runs\n", len(removed))
	}
	return removed
}
