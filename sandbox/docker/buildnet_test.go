package docker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"

	"github.com/tender-grader/tender/internal/hosttest"
	"github.com/tender-grader/tender/sandbox"
	"github.com/tender-grader/tender/sandbox/netproxy"
)

// hostIndex serves body on every IPv4 address of the host (hosttest.Serve).
type hostIndex struct {
	*hosttest.Server
	body string
}

func startHostIndex(t *testing.T, body string) *hostIndex {
	t.Helper()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, body) })
	return &hostIndex{Server: hosttest.Serve(t, h), body: body}
}

// buildTest builds a Dockerfile FROM the pytest image through the allowlist, as a test's own
// image, removed afterwards.
func buildTest(t *testing.T, dockerfile string, files map[string]string, allow ...string) (string, error) {
	t.Helper()
	a, err := netproxy.ParseAllowlist(allow)
	if err != nil {
		t.Fatal(err)
	}
	ref := "tender-test/buildnet:" + randomHex(6)
	t.Cleanup(func() { removeTestImage(ref) })
	ctxFiles := map[string]string{"Dockerfile": "ARG TENDER_FROM\nFROM ${TENDER_FROM}\n" + dockerfile}
	maps.Copy(ctxFiles, files)
	b := DockerfileBuild{Ref: ref, Digest: randomHex(32), Dockerfile: "Dockerfile", From: testImageID,
		ContextDir: writeFiles(t, ctxFiles),
		Network: &BuildNetwork{Allow: a, Who: "test.network.allow",
			Relay: func(context.Context) (string, error) { return testImageID, nil }}}
	var progress strings.Builder
	id, err := engine.EnsureDockerfile(context.Background(), b, &progress)
	t.Logf("build output:\n%s", progress.String())
	assertNoBuildNetwork(t)
	return id, err
}

func removeTestImage(ref string) {
	_, _ = engine.cli.ImageRemove(context.Background(), ref, client.ImageRemoveOptions{Force: true, PruneChildren: true})
}

// assertNoBuildNetwork checks that the build left neither its network nor its relay behind.
func assertNoBuildNetwork(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	nets, err := engine.cli.NetworkList(ctx,
		client.NetworkListOptions{Filters: make(client.Filters).Add("label", LabelSession+"="+engine.session)})
	if err != nil {
		t.Fatal(err)
	}
	left, err := engine.labelled(ctx, LabelSession+"="+engine.session)
	if err != nil {
		t.Fatal(err)
	}
	if len(nets.Items) > 0 || len(left) > 0 {
		t.Errorf("the build left %d network(s) and %d container(s) behind", len(nets.Items), len(left))
	}
}

// TestBuildNetworkFetchesAndRecords: a RUN step fetches from an allowed host through the
// proxy (urllib honours the proxy variables the build gets); the image holds what it
// fetched, and its label records the request with the body's digest. The image is not built
// again for the same recipe and base.
func TestBuildNetworkFetchesAndRecords(t *testing.T) {
	ix := startHostIndex(t, "tinypkg 1.0\n")
	url := fmt.Sprintf("http://127.0.0.1:%d/simple/tinypkg/", ix.Port)
	id, err := buildTest(t, "USER root\nRUN python3 -c \"import urllib.request as u; "+
		"open('/fetched', 'wb').write(u.urlopen('"+url+"').read())\"\n", nil, fmt.Sprintf("127.0.0.1:%d", ix.Port))
	if err != nil {
		t.Fatal(err)
	}
	in, err := engine.cli.ImageInspect(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if in.Config.Labels[LabelFrom] != testImageID {
		t.Errorf("label %s = %q, want the base %s", LabelFrom, in.Config.Labels[LabelFrom], testImageID)
	}
	data, err := engine.BuildRecord(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var rec netproxy.Record
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatalf("the image's network record %q: %v", data, err)
	}
	sum := sha256.Sum256([]byte(ix.body))
	want := netproxy.Request{Method: "GET", Host: fmt.Sprintf("127.0.0.1:%d", ix.Port), Path: "/simple/tinypkg/",
		Status: 200, Bytes: int64(len(ix.body)), SHA256: hex.EncodeToString(sum[:])}
	if len(rec.Requests) != 1 || rec.Requests[0] != want {
		t.Errorf("record %+v\nwant one request %+v", rec, want)
	}
	res := runDocker(t, withImage(testSpec(t, "cat", "/fetched"), id))
	if res.ExitCode != 0 || string(res.Stdout.Head) != ix.body {
		t.Errorf("the image holds %q (exit %d), want what the build fetched", res.Stdout.Head, res.ExitCode)
	}
	if n := ix.Foreign.Load(); n != 0 {
		t.Errorf("the index got %d connection(s) from off the host's loopback", n)
	}
}

func withImage(s sandbox.Spec, image string) sandbox.Spec {
	s.Image = image
	return s
}

// TestBuildNetworkRefusesAHostOffTheList: a fetch from a host the allowlist does not name
// fails the build, and the error says which request the proxy refused and which list to
// change.
func TestBuildNetworkRefusesAHostOffTheList(t *testing.T) {
	ix := startHostIndex(t, "never\n")
	_, err := buildTest(t, "RUN python3 -c \"import urllib.request as u; u.urlopen('http://192.0.2.77:8080/simple/')\"\n",
		nil, fmt.Sprintf("127.0.0.1:%d", ix.Port))
	want := fmt.Sprintf("the build network refused GET 192.0.2.77:8080/simple/ (192.0.2.77:8080 is not in "+
		"test.network.allow (127.0.0.1:%d))", ix.Port)
	if !errors.Is(err, sandbox.ErrImageBuild) || !strings.Contains(err.Error(), want) ||
		!strings.Contains(err.Error(), "HTTP Error 403") {
		t.Errorf("build: %v\nwant it refused with %q and the step's own 403", err, want)
	}
}

// TestBuildNetworkHasNoOtherWayOut: a RUN step that ignores the proxy and connects straight
// to the index, on every address of the host, reaches nothing; the step exits 0 only if a
// connection succeeds, so the build must fail, and the index sees no connection.
func TestBuildNetworkHasNoOtherWayOut(t *testing.T) {
	ix := startHostIndex(t, "never\n")
	addrs := hosttest.IPv4(t)
	script := fmt.Sprintf(`import socket, sys
ok = False
for a in %q.split():
    try:
        socket.create_connection((a, %d), timeout=5).close()
        print("REACHED", a)
        ok = True
    except OSError as e:
        print("unreachable", a, e)
sys.exit(0 if ok else 1)
`, strings.Join(addrs, " "), ix.Port)
	_, err := buildTest(t, "COPY direct.py /tmp/direct.py\nRUN python3 /tmp/direct.py\n",
		map[string]string{"direct.py": script}, fmt.Sprintf("127.0.0.1:%d", ix.Port))
	if err == nil || strings.Contains(err.Error(), "REACHED") || !strings.Contains(err.Error(), "non-zero code: 1") {
		t.Fatalf("build: %v; want it failed with every address unreachable", err)
	}
	for _, a := range addrs {
		if !strings.Contains(err.Error(), "unreachable "+a+" ") {
			t.Errorf("the step's output does not say %s was unreachable: %v", a, err)
		}
	}
	if n := ix.Foreign.Load(); n != 0 {
		t.Errorf("the index got %d connection(s) straight from the build", n)
	}
}

// TestSweepAndCloseRemoveBuildNetworks: a build network a dead run left is swept, a live
// run's is not; Close removes the networks its own Backend made.
func TestSweepAndCloseRemoveBuildNetworks(t *testing.T) {
	ctx := context.Background()
	other, err := New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	me := engine.self
	deadOwner := owner{Host: me.Host, Boot: me.Boot, Pid: 1 << 22, Start: "1"}
	runID := testRunID(t)
	mk := func(name string, labels map[string]string) string {
		t.Helper()
		_, err := engine.cli.NetworkCreate(ctx, name, client.NetworkCreateOptions{Driver: "bridge", Internal: true,
			Options: map[string]string{inhibitIPv4: "true"}, Labels: labels})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _, _ = engine.cli.NetworkRemove(ctx, name, client.NetworkRemoveOptions{}) })
		return name
	}
	dead := mk(runID+"-dead", deadOwner.labels(runID, "n", "dead-session"))
	live := mk(runID+"-live", other.self.labels(runID, "n", other.session))
	removed, err := engine.Sweep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(removed, "network/"+dead) || slices.Contains(removed, "network/"+live) {
		t.Errorf("sweep removed %v; want %s and not %s", removed, dead, live)
	}
	if err := other.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := engine.cli.NetworkInspect(ctx, live, client.NetworkInspectOptions{}); !cerrdefs.IsNotFound(err) {
		t.Errorf("Close left its network %s: %v", live, err)
	}
}
