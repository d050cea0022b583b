package phase

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestProfile: phases add up by name in the order each was first timed, from many goroutines;
// a context without a profile times nothing. A phase's wall time is at least what it slept.
func TestProfile(t *testing.T) {
	Start(context.Background(), "nowhere")() // no profile: nothing to record, nothing to fail

	p := &Profile{}
	ctx := With(context.Background(), p)
	done := Start(ctx, "first")
	time.Sleep(20 * time.Millisecond)
	done()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { Start(ctx, "second")() })
	}
	wg.Wait()
	Start(ctx, "first")()

	rows := p.Rows()
	if len(rows) != 2 || rows[0].Name != "first" || rows[1].Name != "second" {
		t.Fatalf("rows %+v; want first, then second", rows)
	}
	if rows[0].Count != 2 || rows[1].Count != 8 {
		t.Errorf("counts %d and %d; want 2 and 8", rows[0].Count, rows[1].Count)
	}
	if rows[0].Wall < 20*time.Millisecond || rows[0].CPU < 0 {
		t.Errorf("first: wall %s, CPU %s; want at least the 20ms it slept, and no negative CPU", rows[0].Wall, rows[0].CPU)
	}
}
