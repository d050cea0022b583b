package docker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/tender-grader/tender/sandbox"
	"github.com/tender-grader/tender/sandbox/netproxy"
)

// BuildNetwork lets a Dockerfile build fetch from the hosts of an allowlist, and nothing else.
type BuildNetwork struct {
	Allow netproxy.Allowlist
	Who   string // the allowlist's field, named in refusals: environments.NAME.network.allow
	// Relay returns the image the relay runs in: any image with python3 (3.7 or later), such as
	// the pytest verifier image. It is called only when the build runs.
	Relay func(ctx context.Context) (string, error)
}

// inhibitIPv4 keeps the host off the build's network: the bridge gets no address, so the
// build's containers can reach each other and nothing else (not the host's services).
const inhibitIPv4 = "com.docker.network.bridge.inhibit_ipv4"

// buildNet is a build's network while it runs: an internal network whose only other member
// is the relay container, whose streams carry the build's connections to the proxy here.
type buildNet struct {
	d      *Backend
	name   string // of the network
	relay  string // the relay container's ID
	conn   client.HijackedResponse
	mux    *netproxy.Mux
	proxy  *netproxy.Proxy
	served chan error
	copied chan struct{}
	stderr *sandbox.CapWriter
	url    string // the proxy as the build reaches it: http://IP:PORT
}

// openBuildNetwork creates the network and the relay, and serves the proxy through it. On
// error everything it made is gone again.
func (d *Backend) openBuildNetwork(ctx context.Context, n BuildNetwork, ref string) (_ *buildNet, err error) {
	b := &buildNet{d: d, name: "tender-build-" + randomHex(6), served: make(chan error, 1),
		copied: make(chan struct{}), stderr: sandbox.NewCapWriter(4 << 10)}
	labels := d.self.labels(b.name, "build/"+ref, d.session)
	_, err = d.cli.NetworkCreate(ctx, b.name, client.NetworkCreateOptions{Driver: "bridge", Internal: true,
		Options: map[string]string{inhibitIPv4: "true"}, Labels: labels})
	if err != nil {
		return nil, fmt.Errorf(
			"%w: the engine could not create the internal network %s that a build with network: runs on "+
				"(it must be able to make user-defined bridge networks, as docker network create --internal "+
				"does): %w",
			ErrEngine,
			b.name,
			err,
		)
	}
	defer func() {
		if err != nil {
			b.close(ctx)
		}
	}()
	image, err := n.Relay(ctx)
	if err != nil {
		return nil, fmt.Errorf("the image the build network's relay runs in: %w", err)
	}
	if err := b.startRelay(ctx, image, labels); err != nil {
		return nil, err
	}
	b.proxy = netproxy.New(n.Allow, n.Who)
	go func() { b.served <- b.proxy.Serve(b.mux) }()
	return b, nil
}

// startRelay runs the relay on the network, attached to its streams, and waits until it
// listens.
func (b *buildNet) startRelay(ctx context.Context, image string, labels map[string]string) error {
	d := b.d
	yes, pids := true, int64(64)
	created, err := d.cli.ContainerCreate(ctx, client.ContainerCreateOptions{
		Name: b.name + "-relay",
		Config: &container.Config{
			Image: image, User: sandbox.VerifierUser, Env: []string{"PATH=" + sandbox.SafePath},
			Entrypoint: netproxy.RelayArgv("python3", "0.0.0.0", netproxy.RelayPort), Labels: labels,
			AttachStdin: true, AttachStdout: true, AttachStderr: true, OpenStdin: true, StdinOnce: true,
		},
		HostConfig: &container.HostConfig{
			NetworkMode: container.NetworkMode(b.name), CapDrop: []string{"ALL"},
			SecurityOpt: []string{"no-new-privileges"}, ReadonlyRootfs: true, Init: &yes,
			Resources: container.Resources{Memory: 256 << 20, MemorySwap: 256 << 20, NanoCPUs: 1e9, PidsLimit: &pids},
			LogConfig: container.LogConfig{Type: "none"},
		},
	})
	if err != nil {
		return fmt.Errorf("%w: create the build network's relay from %s: %w", ErrEngine, image, err)
	}
	b.relay = created.ID
	attached, err := d.cli.ContainerAttach(ctx, b.relay,
		client.ContainerAttachOptions{Stream: true, Stdin: true, Stdout: true, Stderr: true})
	if err != nil {
		return fmt.Errorf("%w: attach to the build network's relay: %w", ErrEngine, err)
	}
	b.conn = attached.HijackedResponse
	pr, pw := io.Pipe()
	go func() {
		defer close(b.copied)
		_, err := stdcopy.StdCopy(pw, b.stderr, b.conn.Reader)
		pw.CloseWithError(err)
	}()
	b.mux = netproxy.NewMux(pr, b.conn.Conn)
	if _, err := d.cli.ContainerStart(ctx, b.relay, client.ContainerStartOptions{}); err != nil {
		return fmt.Errorf("%w: start the build network's relay: %w", ErrEngine, err)
	}
	return b.awaitRelay(ctx)
}

// awaitRelay waits for the relay's ready frame, then learns its address on the network.
func (b *buildNet) awaitRelay(ctx context.Context) error {
	t := time.NewTimer(b.d.SetupTimeout)
	defer t.Stop()
	select {
	case <-b.mux.Ready():
	case <-b.mux.Done():
		b.conn.Close()
		<-b.copied // the relay's stderr is complete
		return fmt.Errorf("%w: the build network's relay ended before it listened (%v): %s", sandbox.ErrImageBuild,
			b.mux.Err(), oneLine(b.stderr.Capture().String()))
	case <-t.C:
		return fmt.Errorf("%w: the build network's relay did not listen within %s", sandbox.ErrImageBuild,
			b.d.SetupTimeout)
	case <-ctx.Done():
		return ctx.Err()
	}
	in, err := b.d.cli.ContainerInspect(ctx, b.relay, client.ContainerInspectOptions{})
	if err != nil {
		return fmt.Errorf("%w: inspect the build network's relay: %w", ErrEngine, err)
	}
	ep := in.Container.NetworkSettings.Networks[b.name]
	if ep == nil || !ep.IPAddress.IsValid() {
		return fmt.Errorf("%w: the build network's relay has no address on %s", sandbox.ErrImageBuild, b.name)
	}
	b.url = (&url.URL{Scheme: "http", Host: ep.IPAddress.String() + ":" + strconv.Itoa(b.mux.Port())}).String()
	return nil
}

// buildArgs point every client that honours the usual variables at the proxy. The classic
// builder passes these to RUN steps without an ARG and keeps them out of the image's history.
func (b *buildNet) buildArgs() map[string]*string {
	args := map[string]*string{}
	for _, k := range []string{"HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy"} {
		args[k] = &b.url
	}
	return args
}

// close stops the proxy, the relay and the network, and returns what the build fetched.
func (b *buildNet) close(ctx context.Context) netproxy.Record {
	var rec netproxy.Record
	if b.proxy != nil {
		b.proxy.Close()
		<-b.served
		rec = b.proxy.Record()
	}
	if b.mux != nil {
		b.mux.Close()
	}
	if b.conn.Conn != nil {
		b.conn.Close()
		<-b.copied
	}
	cctx, cancel := b.d.cleanupContext(ctx)
	defer cancel()
	if b.relay != "" {
		if err := b.d.forceRemove(cctx, b.relay); err != nil {
			b.d.logf("%v; `tender gc` will sweep it", err)
		}
	}
	if _, err := b.d.cli.NetworkRemove(cctx, b.name, client.NetworkRemoveOptions{}); err != nil &&
		!cerrdefs.IsNotFound(err) {
		b.d.logf("could not remove network %s: %v; `tender gc` will sweep it", b.name, err)
	}
	return rec
}

// sweepNetworks removes the build networks of dead runs.
func (d *Backend) sweepNetworks(ctx context.Context, judge func(map[string]string) bool) ([]string, error) {
	list, err := d.cli.NetworkList(ctx, client.NetworkListOptions{Filters: make(client.Filters).Add("label", LabelRun)})
	if err != nil {
		return nil, fmt.Errorf("%w: list tender networks: %w", ErrEngine, err)
	}
	var removed []string
	var errs []error
	for _, n := range list.Items {
		if !judge(n.Labels) {
			continue
		}
		if _, err := d.cli.NetworkRemove(ctx, n.ID, client.NetworkRemoveOptions{}); err != nil &&
			!cerrdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("%w: remove network %s: %w", ErrEngine, n.Name, err))
			continue
		}
		d.logf("removed network %s of run %s", n.Name, n.Labels[LabelRun])
		removed = append(removed, "network/"+n.Name)
	}
	return removed, errors.Join(errs...)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
