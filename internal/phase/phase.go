// Package phase times the phases of a grade, for a profile: the wall time of each named phase,
// and the CPU time this process and the children it waited for spent meanwhile. A context that
// carries no Profile times nothing: Start costs one context lookup. CPU is the whole process's,
// so it is each phase's own only when one pair runs at a time (--concurrency 1); wall time is
// each phase's own at any concurrency.
package phase

import (
	"context"
	"sync"
	"syscall"
	"time"
)

// A Profile adds up the phases timed under a context that carries it. It is safe for
// concurrent use.
type Profile struct {
	mu    sync.Mutex
	rows  map[string]*Row
	order []string
}

// Row is one phase's total.
type Row struct {
	Name  string
	Count int
	Wall  time.Duration
	CPU   time.Duration
}

type key struct{}

// With returns ctx carrying p.
func With(ctx context.Context, p *Profile) context.Context {
	return context.WithValue(ctx, key{}, p)
}

// Start times the phase name until the returned function is called (once).
func Start(ctx context.Context, name string) func() {
	p, _ := ctx.Value(key{}).(*Profile)
	if p == nil {
		return func() {}
	}
	wall, cpu := time.Now(), cpuTime()
	return func() { p.add(name, time.Since(wall), cpuTime()-cpu) }
}

func (p *Profile) add(name string, wall, cpu time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.rows == nil {
		p.rows = map[string]*Row{}
	}
	r := p.rows[name]
	if r == nil {
		r = &Row{Name: name}
		p.rows[name] = r
		p.order = append(p.order, name)
	}
	r.Count++
	r.Wall += wall
	r.CPU += cpu
}

// Rows are the phases in the order each was first timed.
func (p *Profile) Rows() []Row {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]Row, 0, len(p.order))
	for _, name := range p.order {
		out = append(out, *p.rows[name])
	}
	return out
}

// cpuTime is the user and system time of this process and of the children it waited for.
func cpuTime() time.Duration {
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if syscall.Getrusage(who, &ru) == nil {
			total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	return total
}
