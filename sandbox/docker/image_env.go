package docker

import (
	"archive/tar"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/build"
	"github.com/moby/moby/client"

	"github.com/tender-grader/tender/sandbox"
)

// EnsureRecipe returns the ID of the image of an offline recipe (a built-in one, or a suite
// environment's), building it with debootstrap when it is missing or its recipe digest label
// differs. A build of the same recipe by another process is waited for, not repeated.
//
// With an ImageCache, an image missing here is loaded from the cache when the cache has it,
// and the image is saved to the cache when the cache does not have it.
func (d *Backend) EnsureRecipe(ctx context.Context, r sandbox.Recipe, progress io.Writer) (string, error) {
	progress = orDiscard(progress)
	id, err := d.ensureRecipe(ctx, r, progress)
	if err == nil {
		d.keepCached(ctx, r, progress)
	}
	return id, err
}

func (d *Backend) ensureRecipe(ctx context.Context, r sandbox.Recipe, progress io.Writer) (string, error) {
	if id, ok := d.currentImage(ctx, r); ok {
		return id, nil
	}
	if err := d.inspectFailed(ctx, r.Ref()); err != nil {
		return "", err // the engine did not say the image is missing
	}
	fmt.Fprintf(
		progress,
		"image %s: missing or out of date; taking the build lock (another build of it is waited for)\n",
		r.Ref(),
	)
	unlock, err := sandbox.LockBuild(ctx, r)
	if err != nil {
		return "", err
	}
	defer unlock()
	if id, ok := d.currentImage(ctx, r); ok {
		fmt.Fprintf(progress, "image %s: built by another process meanwhile\n", r.Ref())
		return id, nil
	}
	if err := d.inspectFailed(ctx, r.Ref()); err != nil {
		return "", err
	}
	if id, ok := d.loadCached(ctx, r, progress); ok {
		return id, nil
	}
	fmt.Fprintf(progress, "image %s: building it offline\n", r.Ref())
	return d.BuildImage(ctx, r, progress)
}

// DockerfileBuild is an image built from a Dockerfile through the engine's API.
type DockerfileBuild struct {
	Ref        string // the tag, e.g. tender-env/NAME:<digest[:12]>
	Digest     string // over the build context's files; labelled on the image
	ContextDir string // host directory sent as the build context (regular files only)
	Dockerfile string // its path inside the context, slash-separated
	// From is the ID of the image it builds on (another environment's), passed as the build
	// argument TENDER_FROM and labelled: an image built from another base is built again.
	From string
	// Network lets the build fetch through Tender's proxy; nil: the build has no network.
	Network *BuildNetwork
}

// Labels of images built from a Dockerfile.
const (
	LabelFrom    = "tender.build.from"    // the image ID the build started from (TENDER_FROM)
	LabelNetwork = "tender.build.network" // what a build with network fetched: a netproxy.Record as JSON
)

// EnsureDockerfile returns the ID of b's image, building it when no image carries its tag,
// context digest and base. Without b.Network the build has no network: a FROM must name an
// image on this machine.
func (d *Backend) EnsureDockerfile(ctx context.Context, b DockerfileBuild, progress io.Writer) (string, error) {
	progress = orDiscard(progress)
	if id, ok, err := d.builtFrom(ctx, b); ok || err != nil {
		return id, err
	}
	unlock, err := sandbox.LockImage(ctx, b.Ref, b.Digest)
	if err != nil {
		return "", err
	}
	defer unlock()
	if id, ok, err := d.builtFrom(ctx, b); ok || err != nil { // another process built it meanwhile
		return id, err
	}
	start := time.Now()
	id, err := d.buildDockerfile(ctx, b, progress)
	if err != nil {
		return "", fmt.Errorf("%w: build %s from %s: %w", sandbox.ErrImageBuild, b.Ref, b.Dockerfile, err)
	}
	fmt.Fprintf(progress, "image %s: built %s in %s\n", b.Ref, shortID(id), time.Since(start).Round(time.Second))
	return id, nil
}

func (d *Backend) buildDockerfile(ctx context.Context, b DockerfileBuild, progress io.Writer) (string, error) {
	labels := map[string]string{LabelRecipeDigest: b.Digest, LabelRecipeName: b.Ref}
	args := map[string]*string{}
	if b.From != "" {
		args["TENDER_FROM"], labels[LabelFrom] = &b.From, b.From
	}
	if b.Network != nil {
		return d.buildWithNetwork(ctx, b, args, labels, progress)
	}
	fmt.Fprintf(progress, "image %s: building %s through the engine (no network)\n", b.Ref, b.Dockerfile)
	_, err := d.engineBuild(ctx, dirContext(b.ContextDir), client.ImageBuildOptions{Tags: []string{b.Ref},
		Dockerfile: b.Dockerfile, NetworkMode: "none", BuildArgs: args, Labels: labels}, progress)
	if err != nil {
		return "", err
	}
	return d.inspectBuilt(ctx, b.Ref)
}

// buildWithNetwork builds on a network of its own through Tender's proxy, then labels the
// result with the record of what it fetched, in a second build without network (the record
// is known only once the first has ended).
func (d *Backend) buildWithNetwork(ctx context.Context, b DockerfileBuild, args map[string]*string,
	labels map[string]string, progress io.Writer) (string, error) {
	n, err := d.openBuildNetwork(ctx, *b.Network, b.Ref)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(progress, "image %s: building %s through the engine, on network %s through Tender's proxy "+
		"(allowed: %s)\n", b.Ref, b.Dockerfile, n.name, strings.Join(b.Network.Allow.Strings(), ", "))
	maps.Copy(args, n.buildArgs())
	id, err := d.engineBuild(ctx, dirContext(b.ContextDir), client.ImageBuildOptions{Dockerfile: b.Dockerfile,
		NetworkMode: n.name, BuildArgs: args}, progress)
	rec := n.close(ctx)
	fmt.Fprintf(progress, "image %s: build network: %s\n", b.Ref, rec.Summary())
	if err != nil {
		if refused := rec.Refused(); len(refused) > 0 {
			err = fmt.Errorf("%w; the build network refused %s", err, strings.Join(refused, "; "))
		}
		return "", err
	}
	if id == "" {
		return "", errors.New("the engine did not say which image the build made")
	}
	record, err := json.Marshal(rec)
	if err != nil {
		return "", err
	}
	labels[LabelNetwork] = string(record)
	_, err = d.engineBuild(ctx, fileContext("Dockerfile", "FROM "+id+"\n"), client.ImageBuildOptions{
		Tags: []string{b.Ref}, Dockerfile: "Dockerfile", NetworkMode: "none", Labels: labels}, progress)
	if err != nil {
		return "", fmt.Errorf("labelling the image with its network record: %w", err)
	}
	return d.inspectBuilt(ctx, b.Ref)
}

// engineBuild runs one classic build of the context tar stream and returns the image ID the
// stream ends with. The build's output goes to progress, and its error names the failing step.
func (d *Backend) engineBuild(ctx context.Context, writeContext func(io.Writer) error, o client.ImageBuildOptions,
	progress io.Writer) (string, error) {
	o.Remove, o.ForceRemove, o.Version = true, true, build.BuilderV1
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(writeContext(pw)) }()
	defer pr.Close()
	resp, err := d.cli.ImageBuild(ctx, pr, o)
	if err != nil {
		pr.CloseWithError(err)
		return "", fmt.Errorf("%w: %w", ErrEngine, err)
	}
	defer resp.Body.Close()
	return relayBuild(resp.Body, prefixedWriter{progress, "build: "})
}

func dirContext(dir string) func(io.Writer) error {
	return func(w io.Writer) error { return sandbox.WriteTar(w, []sandbox.TarEntry{{Dir: dir}}) }
}

// fileContext is a build context of one file.
func fileContext(name, content string) func(io.Writer) error {
	return func(w io.Writer) error {
		tw := tar.NewWriter(w)
		err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Size: int64(len(content)), Mode: 0o644,
			Format: tar.FormatPAX})
		if err == nil {
			_, err = io.WriteString(tw, content)
		}
		if err == nil {
			err = tw.Close()
		}
		return err
	}
}

func (d *Backend) inspectBuilt(ctx context.Context, ref string) (string, error) {
	in, err := d.cli.ImageInspect(ctx, ref)
	if err != nil {
		return "", fmt.Errorf("%w: %s after its build: %w", ErrEngine, ref, err)
	}
	return in.ID, nil
}

// BuildRecord returns what the build of image id fetched (a netproxy.Record as JSON), or
// nothing for an image built without network.
func (d *Backend) BuildRecord(ctx context.Context, id string) ([]byte, error) {
	in, err := d.cli.ImageInspect(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("%w: inspect image %s: %w", ErrEngine, id, err)
	}
	if in.Config == nil || in.Config.Labels[LabelNetwork] == "" {
		return nil, nil
	}
	return []byte(in.Config.Labels[LabelNetwork]), nil
}

// builtFrom returns the ID of b's image when one carries its tag, context digest and base.
func (d *Backend) builtFrom(ctx context.Context, b DockerfileBuild) (string, bool, error) {
	in, err := d.cli.ImageInspect(ctx, b.Ref)
	switch {
	case err == nil:
		ok := in.Config != nil && in.Config.Labels[LabelRecipeDigest] == b.Digest &&
			in.Config.Labels[LabelFrom] == b.From
		return in.ID, ok, nil
	case cerrdefs.IsNotFound(err):
		return "", false, nil
	}
	return "", false, fmt.Errorf("%w: inspect image %s: %w", ErrEngine, b.Ref, err)
}

var rePinned = regexp.MustCompile(`^(?:(.+)@)?(sha256:[0-9a-f]{64})$`)

// EnsurePinned returns the ID of an image named by its ID (sha256:...) or by NAME@sha256:...,
// where the digest is one of the image's repository digests or its ID (a locally built image
// has no repository digest). An image that is not on this machine is pulled by its digest.
func (d *Backend) EnsurePinned(ctx context.Context, ref string, progress io.Writer) (string, error) {
	id, err := d.FindPinned(ctx, ref, progress)
	if err == nil || !errors.Is(err, errNotHere) {
		return id, err
	}
	return d.pull(ctx, ref, progress)
}

// errNotHere marks a pinned image that is not on this machine (FindPinned).
var errNotHere = errors.New("not on this machine")

// FindPinned is EnsurePinned without the pull: the image must be on the engine already (a
// prebuilt instance image, which Tender never fetches).
func (d *Backend) FindPinned(ctx context.Context, ref string, progress io.Writer) (string, error) {
	g := rePinned.FindStringSubmatch(ref)
	if g == nil {
		return "", fmt.Errorf("%w: %s is not pinned by an ID or a digest", ErrImageMissing, ref)
	}
	name, digest := g[1], g[2]
	if name == "" {
		in, err := d.cli.ImageInspect(ctx, digest)
		if err != nil {
			return "", d.missing(ref, err)
		}
		if in.ID != digest {
			return "", fmt.Errorf("%w: %s names image %s, not an image with that ID", ErrImageMissing, ref, in.ID)
		}
		return in.ID, nil
	}
	if in, err := d.cli.ImageInspect(ctx, name); err == nil {
		for _, rd := range in.RepoDigests {
			if strings.HasSuffix(rd, "@"+digest) {
				return in.ID, nil
			}
		}
		if in.ID == digest {
			return in.ID, nil
		}
		fmt.Fprintf(
			orDiscard(progress),
			"image %s: the local %s is %s, not the pinned digest\n",
			ref,
			name,
			shortID(in.ID),
		)
	} else if !cerrdefs.IsNotFound(err) {
		return "", fmt.Errorf("%w: inspect image %s: %w", ErrEngine, name, err)
	}
	return "", fmt.Errorf("%w: %s is %w with that digest; load it first (docker load), or tag the image "+
		"you have (docker tag ID %s)", ErrImageMissing, ref, errNotHere, name)
}

func (d *Backend) missing(ref string, err error) error {
	if cerrdefs.IsNotFound(err) {
		return fmt.Errorf(
			"%w: %s is not on this machine; load or build it first (docker load, docker build)",
			ErrImageMissing,
			ref,
		)
	}
	return fmt.Errorf("%w: inspect image %s: %w", ErrEngine, ref, err)
}

// prefixedWriter puts a prefix before each write (relayJSON writes whole lines).
type prefixedWriter struct {
	w      io.Writer
	prefix string
}

func (p prefixedWriter) Write(b []byte) (int, error) {
	if _, err := io.WriteString(p.w, p.prefix+string(b)); err != nil {
		return 0, err
	}
	return len(b), nil
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
