package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/sandbox"
	"github.com/tender-grader/tender/sandbox/docker"
)

const imageUsage = "usage: tender image build [--image NAME | --suite DIR [--repo ID=PATH]...] " +
	"[--mirror URL [--keyring FILE]] [--image-cache DIR]\n" +
	"       tender image digest [--image NAME | --suite DIR [--repo ID=PATH]...]"

// imageFlags are the options of every command that may build verifier images.
type imageFlags struct {
	mirrorOptions
	cache string // --image-cache: `docker save` archives by recipe digest
}

func (f *imageFlags) register(fs *flag.FlagSet) {
	fs.StringVar(
		&f.mirror,
		"mirror",
		"",
		"Debian mirror `URL` for debootstrap builds, instead of the host's apt sources (Ubuntu hosts need it)",
	)
	fs.StringVar(
		&f.keyring,
		"keyring",
		"",
		"keyring `file` that checks the mirror, e.g. /usr/share/keyrings/debian-archive-keyring.gpg",
	)
	fs.StringVar(&f.cache, "image-cache", "",
		"load recipe images from the `DIR` of image archives (one per recipe digest) before building, and save them there")
}

func (f imageFlags) check() error {
	if err := f.mirrorOptions.check(); err != nil {
		return err
	}
	if f.cache != "" {
		if info, err := os.Stat(f.cache); err == nil && !info.IsDir() {
			return usageError("--image-cache %s: not a directory; give a directory (it is made when missing)", f.cache)
		}
	}
	return nil
}

func cmdImage(ctx context.Context, inv *invocation, args []string) error {
	fs := newFlags(
		inv,
		"image",
		"image build [--image NAME | --suite DIR] [--mirror URL --keyring FILE] [--image-cache DIR] | "+
			"image digest [--image NAME | --suite DIR]",
	)
	image := fs.String(
		"image",
		"",
		"built-in verifier image `name` (tender-verifier/pytest, the default, or tender-verifier/go)",
	)
	suiteDir := fs.String("suite", "", "the images of the suite in `DIR`: its verifier image and every environment's")
	var o imageFlags
	o.register(fs)
	var repos multiFlag
	fs.Var(&repos, "repo", "with --suite: map repository `ID=PATH` to a local clone (repeatable)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || (pos[0] != "build" && pos[0] != "digest") {
		return usageError("%s", imageUsage)
	}
	if *suiteDir != "" && *image != "" {
		return usageError("--image and --suite: give one")
	}
	if len(repos) > 0 && *suiteDir == "" {
		return usageError("--repo maps a repository of --suite DIR; give the suite too, or drop --repo")
	}
	if *suiteDir == "" && *image == "" {
		*image = sandbox.ImagePytest
	}
	if err := o.check(); err != nil {
		return err
	}
	if pos[0] == "digest" {
		return imageDigest(inv, *image, *suiteDir, o, repos)
	}
	if *suiteDir != "" {
		return buildSuiteImages(ctx, inv, *suiteDir, repos, o)
	}
	r, ok := sandbox.BuiltinRecipe(*image)
	if !ok {
		return usageError("--image %s is not a built-in recipe; use tender-verifier/pytest or tender-verifier/go "+
			"(or --suite DIR for a suite's images)", *image)
	}
	sweepScratch(inv)
	d, err := docker.New(ctx)
	if err != nil {
		return err
	}
	defer d.Close(ctx)
	d.ImageCache = o.cache
	id, err := d.EnsureRecipe(ctx, o.apply(r), inv.Stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(inv.Stdout, "%s %s\n", *image, id)
	return nil
}

// imageDigest prints a built-in recipe's digest, which names its image in caches, or with
// --suite the suite's image key (suiteImageKey).
func imageDigest(inv *invocation, image, suiteDir string, o imageFlags, repoFlags []string) error {
	if o.mirror != "" || o.cache != "" {
		return usageError("image digest takes only --image NAME, or --suite DIR with --repo")
	}
	if suiteDir != "" {
		repos, err := parseRepoFlags(repoFlags)
		if err != nil {
			return err
		}
		s, err := loadSuite(suiteDir, repos)
		if err != nil {
			return err
		}
		fmt.Fprintln(inv.Stdout, suiteImageKey(s))
		return nil
	}
	r, ok := sandbox.BuiltinRecipe(image)
	if !ok {
		return usageError(
			"--image %s is not a built-in recipe; use tender-verifier/pytest or tender-verifier/go",
			image,
		)
	}
	fmt.Fprintln(inv.Stdout, r.Digest())
	return nil
}

// suiteRecipes are the recipe images (debootstrap-built, so cacheable) a suite may run in:
// its verifier image when that is a built-in one and a pair runs in it, and each Debian
// environment's.
func suiteRecipes(s *suite.Suite) []sandbox.Recipe {
	var out []sandbox.Recipe
	if r, ok := sandbox.BuiltinRecipe(s.Verifier.Image); ok && needsSuiteImage(s.Pairs) {
		out = append(out, r)
	}
	for _, name := range slices.Sorted(maps.Keys(s.Environments)) {
		if env := s.Environments[name]; env.Kind == suite.EnvDebian {
			out = append(out, env.Recipe)
		}
	}
	return out
}

// suiteImageKey names the set of a suite's recipe images: "tender-images-" and a digest of
// their names and recipe digests. A cache saved under it holds what this suite needs; a
// change of any recipe (or of Tender's way of building) changes it.
func suiteImageKey(s *suite.Suite) string {
	var lines []string
	for _, r := range suiteRecipes(s) {
		lines = append(lines, r.Ref()+" "+r.Digest()+"\n")
	}
	slices.Sort(lines)
	sum := sha256.Sum256([]byte(strings.Join(lines, "")))
	return "tender-images-" + hex.EncodeToString(sum[:20])
}

// buildSuiteImages makes the suite's verifier image, when a pair runs in it, and the image of
// every environment of the suite, used by a pair or not.
func buildSuiteImages(ctx context.Context, inv *invocation, dir string, repoFlags []string, o imageFlags) error {
	repos, err := parseRepoFlags(repoFlags)
	if err != nil {
		return err
	}
	s, err := loadSuite(dir, repos)
	if err != nil {
		return err
	}
	var envs []*suite.Environment
	for _, name := range slices.Sorted(maps.Keys(s.Environments)) {
		if s.Environments[name].Template == "" { // a template's images are its pairs' environments
			envs = append(envs, s.Environments[name])
		}
	}
	// A suite has a pair, so it needs its verifier image, an environment's, or both.
	verifier := needsSuiteImage(s.Pairs)
	sweepScratch(inv)
	d, err := docker.New(ctx)
	if err != nil {
		return err
	}
	defer d.Close(ctx)
	d.ImageCache = o.cache
	if verifier {
		id, err := ensureVerifierImage(ctx, d, s.Verifier.Image, o, inv.Stderr)
		if err != nil {
			return fmt.Errorf("verifier image %s: %w", s.Verifier.Image, err)
		}
		fmt.Fprintf(inv.Stdout, "(verifier) %s %s\n", s.Verifier.Image, id)
	}
	failed := prepareEnvironments(ctx, inv.Stderr, d, s, envs, o.mirrorOptions)
	for _, env := range envs {
		state := env.ImageID
		if env.Failed != "" {
			state = "FAILED: " + env.Failed
		}
		fmt.Fprintf(inv.Stdout, "%s %s %s\n", env.Name, env.Ref, state)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if failed > 0 {
		return withCode(
			exitFailure,
			fmt.Errorf("%d of %d environment image(s) could not be prepared", failed, len(envs)),
		)
	}
	return nil
}

// verifierImages is an engine that can make a suite's verifier image: one, or each of a pool's.
type verifierImages interface {
	EnsureImage(ctx context.Context, ref string, progress io.Writer) (string, error)
	EnsureRecipe(ctx context.Context, r sandbox.Recipe, progress io.Writer) (string, error)
}

// ensureVerifierImage makes a suite's verifier image: a built-in one from its recipe, with
// the mirror options; any other must be on the engine or pullable.
func ensureVerifierImage(ctx context.Context, d verifierImages, ref string, o imageFlags,
	w io.Writer) (string, error) {
	if r, ok := sandbox.BuiltinRecipe(ref); ok {
		return d.EnsureRecipe(ctx, o.apply(r), w)
	}
	return d.EnsureImage(ctx, ref, w)
}
