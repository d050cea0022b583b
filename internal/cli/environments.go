package cli

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/sandbox"
	"github.com/tender-grader/tender/sandbox/docker"
)

// mirrorOptions override the apt sources lookup of offline (debootstrap) builds.
type mirrorOptions struct {
	mirror, keyring string
}

func (o mirrorOptions) check() error {
	if o.mirror != "" {
		u, err := url.Parse(o.mirror)
		if err != nil || !(u.Scheme == "http" || u.Scheme == "https" || u.Scheme == "file") ||
			(u.Host == "" && u.Scheme != "file") {
			return usageError("--mirror %q: give the URL of a Debian mirror (http, https or file)", o.mirror)
		}
	}
	if o.keyring != "" {
		if o.mirror == "" {
			return usageError("--keyring is for --mirror: give the mirror too")
		}
		if info, err := os.Stat(o.keyring); err != nil || !info.Mode().IsRegular() {
			return usageError(
				"--keyring %s: not a readable file; install debian-archive-keyring or give the keyring's path",
				o.keyring,
			)
		}
	}
	return nil
}

func (o mirrorOptions) apply(r sandbox.Recipe) sandbox.Recipe {
	r.Mirror, r.Keyring = o.mirror, o.keyring
	return r
}

// prepareEnvironments makes the image of each environment once, before any pair runs, and
// pins the environment to the image's ID; the environments they build on (from) come first.
// An environment whose image cannot be made is marked failed (and so is every environment
// built on it): its pairs are graded error (verifier_failed), and the others go on.
func prepareEnvironments(ctx context.Context, w io.Writer, d imageMaker, s *suite.Suite, envs []*suite.Environment,
	o mirrorOptions) (failed int) {
	envs = s.BuildOrder(envs)
	for i, env := range envs {
		if ctx.Err() != nil {
			return failed // interrupted: the caller says so, not each environment
		}
		start := time.Now()
		fmt.Fprintf(w, "tender: environment %d/%d %s (%s): image %s\n", i+1, len(envs), env.Name, env.Kind, env.Ref)
		id, err := ensureEnvironment(ctx, d, s, env, o, w)
		if err != nil && ctx.Err() != nil {
			return failed
		}
		if err != nil {
			env.Failed = strings.Join(strings.Fields(err.Error()), " ")
			failed++
			fmt.Fprintf(w, "tender: environment %s: FAILED: %s\n", env.Name, env.Failed)
			continue
		}
		if env.Network != nil {
			if env.NetworkRecord, err = d.BuildRecord(ctx, id); err != nil {
				env.Failed = "its build record cannot be read: " + oneLine(err)
				failed++
				fmt.Fprintf(w, "tender: environment %s: FAILED: %s\n", env.Name, env.Failed)
				continue
			}
		}
		env.ImageID = id
		fmt.Fprintf(
			w,
			"tender: environment %s: ready, image %s (%s)\n",
			env.Name,
			id,
			time.Since(start).Round(100*time.Millisecond),
		)
	}
	return failed
}

func ensureEnvironment(ctx context.Context, d imageMaker, s *suite.Suite, env *suite.Environment, o mirrorOptions,
	w io.Writer) (string, error) {
	switch env.Kind {
	case suite.EnvDebian:
		return d.EnsureRecipe(ctx, o.apply(env.Recipe), w)
	case suite.EnvDockerfile:
		b := docker.DockerfileBuild{
			Ref: env.Ref, Digest: env.Digest, ContextDir: filepath.Join(s.Dir, filepath.FromSlash(env.Context)),
			Dockerfile: strings.TrimPrefix(env.Dockerfile, env.Context+"/"),
		}
		if env.From != "" {
			base := s.Environments[env.From] // prepared first: BuildOrder
			if base.ImageID == "" {
				return "", fmt.Errorf("it builds on environment %s (from), whose image could not be prepared",
					base.Name)
			}
			b.From = base.ImageID
		}
		if env.Network != nil {
			pytest, _ := sandbox.BuiltinRecipe(sandbox.ImagePytest)
			b.Network = &docker.BuildNetwork{Allow: env.Network, Who: "environments." + env.Name + ".network.allow",
				Relay: func(ctx context.Context) (string, error) { return d.EnsureRecipe(ctx, o.apply(pytest), w) }}
		}
		return d.EnsureDockerfile(ctx, b, w)
	case suite.EnvImageTemplate:
		return d.FindPinned(ctx, env.Ref, w) // a prebuilt instance image is never pulled
	}
	return d.EnsurePinned(ctx, env.Ref, w)
}

// needsSuiteImage reports whether some of pairs runs in the suite's own verifier image.
func needsSuiteImage(pairs []*suite.Pair) bool {
	for _, p := range pairs {
		if p.Environment == "" {
			return true
		}
	}
	return false
}
