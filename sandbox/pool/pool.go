package pool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/tender-grader/tender/sandbox"
)

// Engine is one member of a pool: a backend that can say whether its engine still answers.
type Engine interface {
	sandbox.Backend
	Ping(ctx context.Context) error
}

// Member names an engine, by its address, for the lines the pool prints.
type Member struct {
	Name   string
	Engine Engine
}

// ErrNoEngine means every engine of the pool has been taken out.
var ErrNoEngine = errors.New("no engine left in the pool")

var _ sandbox.Backend = (*Pool)(nil)

// Pool runs each check on one of its engines.
type Pool struct {
	// Log receives one line per engine taken out, and the share of each engine at Close.
	Log io.Writer
	// PingTimeout bounds the question "does the engine still answer?" after a failed check.
	PingTimeout time.Duration

	mu      sync.Mutex
	members []*member
}

type member struct {
	Member
	busy  int    // checks running on it now
	ran   int    // checks whose result it gave
	out   string // why it was taken out; "" while it is in
	order int
}

// New makes a pool of members (at least one), in the order given.
func New(members []Member) (*Pool, error) {
	if len(members) == 0 {
		return nil, fmt.Errorf("%w: a pool needs at least one engine", ErrNoEngine)
	}
	p := &Pool{PingTimeout: 10 * time.Second}
	seen := map[string]bool{}
	for i, m := range members {
		if seen[m.Name] {
			return nil, fmt.Errorf("engine %s is given twice", m.Name)
		}
		seen[m.Name] = true
		p.members = append(p.members, &member{Member: m, order: i})
	}
	return p, nil
}

// Name is the name of the members' backend ("docker"): the pool changes where a check runs,
// not what runs it.
func (p *Pool) Name() string { return p.members[0].Engine.Name() }

// Run runs spec on the least busy engine. When the engine fails under it (an infrastructure
// error, or a container killed from outside, and then the engine does not answer), the
// engine is taken out and spec runs again on another one. Any other outcome is the check's.
func (p *Pool) Run(ctx context.Context, spec sandbox.Spec) (*sandbox.Result, error) {
	c, err := p.Prepare(ctx, spec)
	if err != nil {
		return nil, err
	}
	defer c.Release()
	return c.Run(ctx)
}

var _ sandbox.Preparer = (*Pool)(nil)

// Prepare gets spec ready on the least busy engine, which counts the check as running from
// now until it is released. An engine lost while the check is prepared, or run, is taken out
// as under Run, and the check starts again on another engine, from the start.
func (p *Pool) Prepare(ctx context.Context, spec sandbox.Spec) (sandbox.Prepared, error) {
	for {
		m, err := p.take()
		if err != nil {
			return nil, err
		}
		c, err := sandbox.Prepare(ctx, m.Engine, spec)
		if err == nil {
			return &pooled{p: p, m: m, c: c, spec: spec}, nil
		}
		if p.lost(ctx, m, nil, err) {
			p.release(m, false)
			p.logf("engine %s was lost during check %s; the check runs again on another engine", m.Name, spec.Name)
			continue
		}
		p.release(m, true)
		return nil, err
	}
}

// pooled is a check prepared on one engine of the pool.
type pooled struct {
	p       *Pool
	m       *member
	c       sandbox.Prepared
	spec    sandbox.Spec
	counted bool // the engine gave the check's result
	once    sync.Once
}

func (c *pooled) Run(ctx context.Context) (*sandbox.Result, error) {
	res, err := c.c.Run(ctx)
	if !c.p.lost(ctx, c.m, res, err) {
		c.counted = true
		return res, err
	}
	c.Release()
	c.p.logf("engine %s was lost during check %s; the check runs again on another engine", c.m.Name, c.spec.Name)
	return c.p.Run(ctx, c.spec)
}

func (c *pooled) Release() {
	c.once.Do(func() {
		c.c.Release()
		c.p.release(c.m, c.counted)
	})
}

// take picks the least busy engine in the pool (then the one that ran fewest, then the
// first given) and counts the check on it.
func (p *Pool) take() (*member, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var best *member
	for _, m := range p.members {
		if m.out != "" {
			continue
		}
		if best == nil || m.busy < best.busy || m.busy == best.busy && m.ran < best.ran {
			best = m
		}
	}
	if best == nil {
		return nil, p.noEngine()
	}
	best.busy++
	return best, nil
}

func (p *Pool) noEngine() error {
	var why []string
	for _, m := range p.members {
		why = append(why, m.Name+": "+m.out)
	}
	return fmt.Errorf("%w (%s)", ErrNoEngine, strings.Join(why, "; "))
}

func (p *Pool) release(m *member, counted bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	m.busy--
	if counted {
		m.ran++
	}
}

// lost reports whether the check failed because its engine did: it failed as infrastructure
// (or its container was killed from outside), the run was not cancelled, and the engine no
// longer answers. Such an engine is taken out.
func (p *Pool) lost(ctx context.Context, m *member, res *sandbox.Result, err error) bool {
	if ctx.Err() != nil || err == nil && (res == nil || !res.Killed) {
		return false
	}
	if p.isOut(m) {
		return true // another check found it gone already
	}
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.PingTimeout)
	defer cancel()
	perr := m.Engine.Ping(pctx)
	if perr == nil {
		return false
	}
	if err == nil {
		err = errors.New("its container was killed")
	}
	p.TakeOut(m.Name, fmt.Sprintf("%s; then %s", oneLine(err), oneLine(perr)))
	return true
}

func (p *Pool) isOut(m *member) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return m.out != ""
}

// TakeOut removes the engine named name from the pool, with one line saying why. Checks
// running on it finish there or move; no new check goes to it.
func (p *Pool) TakeOut(name, why string) {
	p.mu.Lock()
	var m *member
	for _, c := range p.members {
		if c.Name == name && c.out == "" {
			m = c
		}
	}
	if m != nil {
		m.out = why
	}
	left := 0
	for _, c := range p.members {
		if c.out == "" {
			left++
		}
	}
	p.mu.Unlock()
	if m != nil {
		p.logf("engine %s is taken out of the pool (%d of %d left): %s", name, left, len(p.members), why)
	}
}

// In returns the members still in the pool.
func (p *Pool) In() []Member {
	p.mu.Lock()
	defer p.mu.Unlock()
	var in []Member
	for _, m := range p.members {
		if m.out == "" {
			in = append(in, m.Member)
		}
	}
	return in
}

// Share is what one engine did.
type Share struct {
	Name   string
	Checks int    // checks whose result it gave
	Out    string // why it was taken out; "" when it stayed in
}

// Shares returns each engine's share, in the order the engines were given.
func (p *Pool) Shares() []Share {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := make([]Share, len(p.members))
	for i, m := range p.members {
		s[i] = Share{Name: m.Name, Checks: m.ran, Out: m.out}
	}
	return s
}

// Close closes every engine side by side, then prints each one's share. An engine taken out
// is closed too (its containers are removed if it answers again); its failure to close is a
// line, not an error: the run already knows it is gone.
func (p *Pool) Close(ctx context.Context) error {
	errs := make([]error, len(p.members))
	var wg sync.WaitGroup
	for i, m := range p.members {
		wg.Go(func() { errs[i] = m.Engine.Close(ctx) })
	}
	wg.Wait()
	for i, m := range p.members {
		if errs[i] != nil && m.out != "" {
			p.logf("engine %s (taken out) could not be cleaned: %s; `tender gc --engine %s` removes what it "+
				"holds once it answers again", m.Name, oneLine(errs[i]), m.Name)
			errs[i] = nil
		} else if errs[i] != nil {
			errs[i] = fmt.Errorf("engine %s: %w", m.Name, errs[i])
		}
	}
	p.logShares()
	return errors.Join(errs...)
}

func (p *Pool) logShares() {
	shares := p.Shares()
	total := 0
	for _, s := range shares {
		total += s.Checks
	}
	var parts []string
	for _, s := range shares {
		part := fmt.Sprintf("%s %d", s.Name, s.Checks)
		if total > 0 {
			part += fmt.Sprintf(" (%d%%)", (s.Checks*100+total/2)/total)
		}
		if s.Out != "" {
			part += ", taken out"
		}
		parts = append(parts, part)
	}
	p.logf("checks per engine: %s", strings.Join(parts, "; "))
}

func (p *Pool) logf(format string, args ...any) {
	if p.Log != nil {
		fmt.Fprintf(p.Log, "tender: pool: "+format+"\n", args...)
	}
}

func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }
