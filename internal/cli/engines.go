package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/sandbox"
	"github.com/tender-grader/tender/sandbox/docker"
	"github.com/tender-grader/tender/sandbox/pool"
)

const engineFlagUsage = "run checks on the Docker engine at `URL` (repeatable: a pool of engines; unix:///PATH, or " +
	"tcp://HOST:PORT with TLS, ?certs=DIR or DOCKER_CERT_PATH); default: the list in TENDER_ENGINES, else DOCKER_HOST"

// engineList is the engines a command was asked to use: its --engine flags, else the comma-
// or space-separated TENDER_ENGINES. Empty means the one engine of DOCKER_HOST, as before.
func engineList(inv *invocation, flags []string) []string {
	if len(flags) > 0 {
		return flags
	}
	return strings.FieldsFunc(
		inv.Getenv("TENDER_ENGINES"),
		func(r rune) bool { return r == ',' || r == ' ' || r == '\n' },
	)
}

// endpoint turns an engine URL into a docker.Endpoint: ?certs=DIR names its TLS files, and a
// tcp:// engine without it takes DOCKER_CERT_PATH, as the docker CLI does.
func endpoint(inv *invocation, raw string) (docker.Endpoint, error) {
	host, query, _ := strings.Cut(raw, "?")
	ep := docker.Endpoint{Host: host}
	if query != "" {
		q, err := url.ParseQuery(query)
		if err != nil || len(q) != 1 || len(q["certs"]) != 1 {
			return ep, usageError(
				"--engine %s: the only option is ?certs=DIR (the engine's ca.pem, cert.pem, key.pem)",
				raw,
			)
		}
		ep.CertDir = q.Get("certs")
	}
	if strings.HasPrefix(host, "tcp://") && ep.CertDir == "" {
		ep.CertDir = inv.Getenv("DOCKER_CERT_PATH")
	}
	return ep, nil
}

// openPool opens every engine of urls, sweeps each, gives each the images pairs need and
// probes its hardening. An engine that cannot be reached or prepared is left out with one
// line; the run goes on while one engine is left.
func openPool(
	ctx context.Context,
	inv *invocation,
	urls []string,
	s *suite.Suite,
	pairs []*suite.Pair,
	img imageFlags,
) (sandbox.Backend, error) {
	var members []pool.Member
	for _, raw := range urls {
		ep, err := endpoint(inv, raw)
		if err != nil {
			closeMembers(ctx, members)
			return nil, err
		}
		d, err := docker.NewAt(ctx, ep)
		if errors.Is(err, docker.ErrEndpoint) {
			closeMembers(ctx, members)
			return nil, usageError("--engine: %v", err)
		}
		if err != nil && ctx.Err() != nil {
			closeMembers(ctx, members)
			return nil, ctx.Err()
		}
		if err != nil {
			fmt.Fprintf(inv.Stderr, "tender: pool: engine %s is left out: %s\n", ep.Host, oneLine(err))
			continue
		}
		sweepEngine(ctx, inv, d, ep.Host)
		d.ImageCache = img.cache
		members = append(members, pool.Member{Name: ep.Host, Engine: d})
	}
	if len(members) == 0 {
		return nil, fmt.Errorf("%w: none of the %d engine(s) given could be reached", pool.ErrNoEngine, len(urls))
	}
	p, err := pool.New(members)
	if err != nil {
		closeMembers(ctx, members)
		return nil, usageError("--engine: %v", err)
	}
	p.Log = inv.Stderr
	if err := preparePool(ctx, inv, p, s, pairs, img); err != nil {
		p.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	fmt.Fprintf(inv.Stderr, "tender: pool: %d of %d engine(s) ready\n", len(p.In()), len(urls))
	return p, nil
}

func preparePool(ctx context.Context, inv *invocation, p *pool.Pool, s *suite.Suite, pairs []*suite.Pair,
	img imageFlags) error {
	probeImage := ""
	if needsSuiteImage(pairs) {
		ref := s.Verifier.Image
		_, err := p.PrepareImage(ctx, ref, func(ctx context.Context, e pool.Engine) (string, error) {
			return ensureVerifierImage(ctx, e.(*docker.Backend), ref, img, inv.Stderr)
		}, inv.Stderr)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("verifier image %s: %w", ref, err)
		}
		probeImage = ref
	}
	envs := s.UsedEnvironments(pairs)
	prepareEnvironments(ctx, inv.Stderr, poolImages{p, inv.Stderr}, s, envs, img.mirrorOptions)
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, env := range envs {
		if probeImage == "" && env.Failed == "" {
			probeImage = env.ImageID
		}
	}
	if probeImage == "" {
		return nil // no image to probe in: every pair's environment failed, and says so
	}
	return p.Probe(ctx, newRunID(), probeImage)
}

// imageMaker makes the image of an environment: one engine, or every engine of a pool.
type imageMaker interface {
	EnsureRecipe(ctx context.Context, r sandbox.Recipe, progress io.Writer) (string, error)
	EnsureDockerfile(ctx context.Context, b docker.DockerfileBuild, progress io.Writer) (string, error)
	EnsurePinned(ctx context.Context, ref string, progress io.Writer) (string, error)
	BuildRecord(ctx context.Context, id string) ([]byte, error)
	FindPinned(ctx context.Context, ref string, progress io.Writer) (string, error)
}

var _ imageMaker = (*docker.Backend)(nil)

// poolImages makes each image once, on an engine that has it if one does, and copies it to
// the other engines of the pool.
type poolImages struct {
	p *pool.Pool
	w io.Writer
}

func (pi poolImages) EnsureRecipe(ctx context.Context, r sandbox.Recipe, progress io.Writer) (string, error) {
	return pi.p.PrepareImage(ctx, r.Ref(), func(ctx context.Context, e pool.Engine) (string, error) {
		return e.(*docker.Backend).EnsureRecipe(ctx, r, progress)
	}, pi.w)
}

func (pi poolImages) EnsureDockerfile(
	ctx context.Context,
	b docker.DockerfileBuild,
	progress io.Writer,
) (string, error) {
	return pi.p.PrepareImage(ctx, b.Ref, func(ctx context.Context, e pool.Engine) (string, error) {
		return e.(*docker.Backend).EnsureDockerfile(ctx, b, progress)
	}, pi.w)
}

func (pi poolImages) EnsurePinned(ctx context.Context, ref string, progress io.Writer) (string, error) {
	return pi.p.PrepareImage(ctx, ref, func(ctx context.Context, e pool.Engine) (string, error) {
		return e.(*docker.Backend).EnsurePinned(ctx, ref, progress)
	}, pi.w)
}

// BuildRecord reads the record from any engine: the pool gave them all the same image.
func (pi poolImages) BuildRecord(ctx context.Context, id string) ([]byte, error) {
	in := pi.p.In()
	if len(in) == 0 {
		return nil, errors.New("no engine of the pool is left to read the image's labels from")
	}
	return in[0].Engine.(*docker.Backend).BuildRecord(ctx, id)
}

// FindPinned finds a prebuilt instance image on the engines; nothing is pulled.
func (pi poolImages) FindPinned(ctx context.Context, ref string, progress io.Writer) (string, error) {
	return pi.p.PrepareImage(ctx, ref, func(ctx context.Context, e pool.Engine) (string, error) {
		return e.(*docker.Backend).FindPinned(ctx, ref, progress)
	}, pi.w)
}

// sweepEngine removes the containers of dead runs from one engine, and says so.
func sweepEngine(ctx context.Context, inv *invocation, d *docker.Backend, name string) {
	removed, err := d.Sweep(ctx)
	switch {
	case err != nil && ctx.Err() == nil:
		fmt.Fprintf(inv.Stderr, "tender: sweeping containers of dead runs on %s: %v\n", name, err)
	case len(removed) > 0:
		fmt.Fprintf(inv.Stderr, "tender: removed %d container(s) left by dead runs on %s\n", len(removed), name)
	}
}

func closeMembers(ctx context.Context, members []pool.Member) {
	for _, m := range members {
		m.Engine.Close(context.WithoutCancel(ctx))
	}
}

func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }
