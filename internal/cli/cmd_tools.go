package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/tender-grader/tender/internal/scratch"
	"github.com/tender-grader/tender/report/bundle"
	"github.com/tender-grader/tender/sandbox/docker"
)

func cmdGC(ctx context.Context, inv *invocation, args []string) error {
	fs := newFlags(inv, "gc", "gc [--engine URL]...")
	var engines multiFlag
	fs.Var(
		&engines,
		"engine",
		"sweep the Docker engine at `URL` (repeatable; default TENDER_ENGINES, else DOCKER_HOST)",
	)
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
		fmt.Fprintln(
			inv.Stdout,
			"left alone (made in another pid namespace; remove it from there, or by hand once its run is over):",
			dir,
		)
	}
	if urls := engineList(inv, engines); len(urls) > 0 {
		errs := []error{derr}
		for _, u := range urls {
			errs = append(errs, gcEngine(ctx, inv, u))
		}
		return errors.Join(errs...)
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

// gcEngine sweeps the engine at raw, one of a pool's.
func gcEngine(ctx context.Context, inv *invocation, raw string) error {
	ep, err := endpoint(inv, raw)
	if err != nil {
		return err
	}
	d, err := docker.NewAt(ctx, ep)
	if err != nil {
		return err
	}
	defer d.Close(ctx)
	removed, err := d.Sweep(ctx)
	for _, id := range removed {
		fmt.Fprintln(inv.Stdout, "removed", id)
	}
	fmt.Fprintf(inv.Stdout, "%d container(s) of dead runs removed from %s\n", len(removed), ep.Host)
	return err
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
	fmt.Fprintf(inv.Stdout, "bundle %s verifies: %d subjects, %s\n", pos[0], len(m.Files), m.SignatureStatus())
	return nil
}
