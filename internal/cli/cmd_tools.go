package cli

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/internal/scratch"
	"github.com/tender-grader/tender/report/bundle"
	"github.com/tender-grader/tender/sandbox"
	"github.com/tender-grader/tender/sandbox/docker"
)

const imageUsage = "usage: tender image build [--image NAME | --suite DIR [--repo ID=PATH]...] [--mirror URL [--keyring FILE]]\n       tender image digest [--image NAME]"

func cmdImage(ctx context.Context, inv *invocation, args []string) error {
	fs := newFlags(inv, "image", "image build [--image NAME | --suite DIR] [--mirror URL --keyring FILE] | image digest [--image NAME]")
	image := fs.String("image", "", "built-in verifier image `name` (tender-verifier/pytest, the default, or tender-verifier/go)")
	suiteDir := fs.String("suite", "", "build the image of every environment of the suite in `DIR`")
	var o mirrorOptions
	fs.StringVar(&o.mirror, "mirror", "", "Debian mirror `URL` for debootstrap builds, instead of the host's apt sources (Ubuntu hosts need it)")
	fs.StringVar(&o.keyring, "keyring", "", "keyring `file` that checks the mirror, e.g. /usr/share/keyrings/debian-archive-keyring.gpg")
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
	if len(repos) > 0 && *suiteDir == "" && pos[0] == "build" {
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
		return usageError("--image %s is not a built-in recipe; use tender-verifier/pytest or tender-verifier/go (or --suite DIR for a suite's environments)", *image)
	}
	sweepScratch(inv)
	d, err := docker.New(ctx)
	if err != nil {
		return err
	}
	defer d.Close(ctx)
	id, err := d.EnsureRecipe(ctx, o.apply(r), inv.Stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(inv.Stdout, "%s %s\n", *image, id)
	return nil
}

// imageDigest prints a built-in recipe's digest, which names its image in caches.
func imageDigest(inv *invocation, image, suiteDir string, o mirrorOptions, repos []string) error {
	if suiteDir != "" || o.mirror != "" || len(repos) > 0 {
		return usageError("image digest takes only --image NAME")
	}
	r, ok := sandbox.BuiltinRecipe(image)
	if !ok {
		return usageError("--image %s is not a built-in recipe; use tender-verifier/pytest or tender-verifier/go", image)
	}
	fmt.Fprintln(inv.Stdout, r.Digest())
	return nil
}

// buildSuiteImages makes the image of every environment of a suite, used by a pair or not.
func buildSuiteImages(ctx context.Context, inv *invocation, dir string, repoFlags []string, o mirrorOptions) error {
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
		envs = append(envs, s.Environments[name])
	}
	if len(envs) == 0 { // nothing to do, so a workflow may run it for every suite
		fmt.Fprintf(inv.Stderr, "tender: suite %s has no environments; nothing to build (`tender image build --image NAME` builds the built-in images)\n", dir)
		return nil
	}
	sweepScratch(inv)
	d, err := docker.New(ctx)
	if err != nil {
		return err
	}
	defer d.Close(ctx)
	failed := prepareEnvironments(ctx, inv.Stderr, d, s, envs, o)
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
		return withCode(exitFailure, fmt.Errorf("%d of %d environment image(s) could not be prepared", failed, len(envs)))
	}
	return nil
}

func cmdGC(ctx context.Context, inv *invocation, args []string) error {
	fs := newFlags(inv, "gc", "gc")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usageError("gc takes no arguments")
	}
	dirs, derr := scratch.Sweep("")
	for _, dir := range dirs {
		fmt.Fprintln(inv.Stdout, "removed", dir)
	}
	fmt.Fprintf(inv.Stdout, "%d temporary director(ies) of dead runs removed\n", len(dirs))
	for _, dir := range scratch.OtherNamespace("") {
		fmt.Fprintln(inv.Stdout, "left alone (made in another pid namespace; remove it from there, or by hand once its run is over):", dir)
	}
	d, err := docker.New(ctx)
	if err != nil {
		return errors.Join(derr, err)
	}
	defer d.Close(ctx)
	removed, err := d.Sweep(ctx)
	for _, id := range removed {
		fmt.Fprintln(inv.Stdout, "removed", id)
	}
	fmt.Fprintf(inv.Stdout, "%d container(s) of dead runs removed\n", len(removed))
	return errors.Join(derr, err)
}

func cmdKeygen(ctx context.Context, inv *invocation, args []string) error {
	fs := newFlags(inv, "keygen", "keygen [--out PREFIX]")
	prefix := fs.String("out", "tender-signing", "write `PREFIX`.key (private, 0600) and PREFIX.pub")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usageError("keygen takes no arguments; use --out PREFIX")
	}
	if err := bundle.GenerateKey(*prefix+".key", *prefix+".pub"); err != nil {
		return withCode(exitUsage, err)
	}
	fmt.Fprintf(inv.Stdout, "wrote %s.key and %s.pub\n", *prefix, *prefix)
	return nil
}

func cmdVerify(ctx context.Context, inv *invocation, args []string) error {
	fs := newFlags(inv, "verify", "verify BUNDLE [--key PUB] [--require-signature]")
	keyFile := fs.String("key", "", "ed25519 public key `file` to check the signature with")
	strict := fs.Bool("require-signature", false, "fail when the bundle is not signed or no key is given")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError("verify takes one BUNDLE directory")
	}
	var pub []byte
	if *keyFile != "" {
		k, err := bundle.LoadPublicKey(*keyFile)
		if err != nil {
			return withCode(exitUsage, err)
		}
		pub = k
	}
	m, err := bundle.Verify(pos[0], pub, bundle.VerifyOptions{RequireSignature: *strict})
	if err != nil {
		var fe *bundle.FileError
		if errors.As(err, &fe) {
			return withCode(exitFailure, fmt.Errorf("bundle %s does not verify: %w", pos[0], err))
		}
		return err
	}
	fmt.Fprintf(inv.Stdout, "bundle %s verifies: %d subjects, %s\n", pos[0], len(m.Subjects), m.SignatureStatus())
	return nil
}
