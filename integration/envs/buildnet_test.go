package envs

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/integration/internal/e2e"
	"github.com/tender-grader/tender/internal/cli"
	"github.com/tender-grader/tender/internal/clitest"
	"github.com/tender-grader/tender/internal/hosttest"
	"github.com/tender-grader/tender/report"
	"github.com/tender-grader/tender/report/bundle"
	"github.com/tender-grader/tender/sandbox/docker"
	"github.com/tender-grader/tender/sandbox/netproxy"
)

// tinyWheel is a wheel of a one-module package, tinypkg 1.0, made here as pip expects it.
func tinyWheel(t *testing.T) []byte {
	t.Helper()
	files := []struct{ name, body string }{
		{"tinypkg/__init__.py", "def greet():\n    return \"hello from tinypkg\"\n"},
		{"tinypkg-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\n"},
		{"tinypkg-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: tender-test\nRoot-Is-Purelib: true\n" +
			"Tag: py3-none-any\n"},
	}
	var record strings.Builder
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	add := func(name, body string) {
		w, err := zw.Create(name)
		if err == nil {
			_, err = io.WriteString(w, body)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range files {
		add(f.name, f.body)
		sum := sha256.Sum256([]byte(f.body))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", f.name, base64.RawURLEncoding.EncodeToString(sum[:]), len(f.body))
	}
	add("tinypkg-1.0.dist-info/RECORD", record.String()+"tinypkg-1.0.dist-info/RECORD,,\n")
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// packageIndex is a PEP 503 index of tinypkg on every IPv4 address of the host
// (hosttest.Serve). /simple/ links the wheel on the index itself; /elsewhere/ links it on a
// host no allowlist names.
type packageIndex struct {
	*hosttest.Server
	wheel []byte
}

const wheelName = "tinypkg-1.0-py3-none-any.whl"

func startPackageIndex(t *testing.T) *packageIndex {
	t.Helper()
	ix := &packageIndex{wheel: tinyWheel(t)}
	sum := sha256.Sum256(ix.wheel)
	// The links name the port the request came in on, which the server knows before ix does.
	page := func(r *http.Request, host string) string {
		port := r.Context().Value(http.LocalAddrContextKey).(*net.TCPAddr).Port
		return fmt.Sprintf("<!DOCTYPE html><html><body><a href=\"http://%s:%d/files/%s#sha256=%s\">%s</a></body></html>\n",
			host, port, wheelName, hex.EncodeToString(sum[:]), wheelName)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/simple/tinypkg/", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, page(r, "127.0.0.1"))
	})
	mux.HandleFunc("/elsewhere/tinypkg/", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, page(r, "files.example.test"))
	})
	mux.HandleFunc("/files/"+wheelName, func(w http.ResponseWriter, r *http.Request) { w.Write(ix.wheel) })
	ix.Server = hosttest.Serve(t, mux)
	return ix
}

// writeNetSuite makes a suite whose environments build on a debian environment with pip (and
// python3-tz): fetch installs tinypkg from the index (allowed), offlist from an index page
// that links a host off the list, direct connects straight to the index without the proxy. A
// pair runs in each, and its test imports tinypkg; a pair in the debian environment itself
// imports pytz, a package of the environment's Debian list.
func writeNetSuite(t *testing.T, ix *packageIndex) string {
	t.Helper()
	dir := t.TempDir()
	base := e2e.BundleRepo(t, map[string]string{
		"tests/test_tiny.py": "import tinypkg\n\n\ndef test_greet():\n    assert tinypkg.greet() == \"hello from tinypkg\"\n",
		"tests/test_tz.py":   "import pytz\n\n\ndef test_utc():\n    assert pytz.utc.zone == \"UTC\"\n",
	}, filepath.Join(dir, "repos", "tiny.bundle"))
	allow := fmt.Sprintf("127.0.0.1:%d", ix.Port)
	pip := func(index string) string {
		return "ARG TENDER_FROM\nFROM ${TENDER_FROM}\nUSER root\n" +
			"RUN pip install --break-system-packages --no-cache-dir --disable-pip-version-check --retries 0 " +
			fmt.Sprintf("--index-url http://%s/%s/ tinypkg\nUSER 65532\n", allow, index)
	}
	direct := fmt.Sprintf("import socket, sys\nok = False\nfor a in %q.split():\n    try:\n"+
		"        socket.create_connection((a, %d), timeout=5).close()\n        print('REACHED', a)\n        ok = True\n"+
		"    except OSError as e:\n        print('unreachable', a, e)\nsys.exit(0 if ok else 1)\n",
		strings.Join(hosttest.IPv4(t), " "), ix.Port)
	manifest := "name: net\nversion: \"1\"\nenvironments:\n  pip:\n    debian: {packages: [python3-pip, python3-tz]}\n"
	for _, env := range []string{"fetch", "offlist", "direct"} {
		manifest += fmt.Sprintf("  %s:\n    dockerfile: envs/%s/Dockerfile\n    from: pip\n    network:\n"+
			"      allow: [\"%s\"]\n", env, env, allow)
	}
	manifest += "repositories:\n  tiny: {bundle: repos/tiny.bundle}\npairs:\n"
	for _, env := range []string{"fetch", "offlist", "direct"} {
		manifest += fmt.Sprintf("  - {id: in-%s, repository: tiny, environment: %s, base_commit: %s, issue: issue.md, "+
			"patch: notes.diff, fail_to_pass: [tests/test_tiny.py::test_greet]}\n", env, env, base)
	}
	manifest += fmt.Sprintf("  - {id: in-pip, repository: tiny, environment: pip, base_commit: %s, issue: issue.md, "+
		"patch: notes.diff, fail_to_pass: [tests/test_tz.py::test_utc]}\n", base)
	clitest.WriteFiles(t, dir, map[string]string{"tender.yaml": manifest, "issue.md": "Needs tinypkg.\n",
		"notes.diff":              "diff --git a/NOTES b/NOTES\nnew file mode 100644\n--- /dev/null\n+++ b/NOTES\n@@ -0,0 +1 @@\n+tiny\n",
		"envs/fetch/Dockerfile":   pip("simple"),
		"envs/offlist/Dockerfile": pip("elsewhere"),
		"envs/direct/Dockerfile":  "ARG TENDER_FROM\nFROM ${TENDER_FROM}\nCOPY direct.py /tmp/direct.py\nRUN python3 /tmp/direct.py\n",
		"envs/direct/direct.py":   direct})
	return dir
}

// TestBuildNetwork is the network of an environment's build, end to end: a Dockerfile
// environment FROM a debian environment with pip installs a wheel with `pip install
// --index-url` from an index served on the host; what it fetched is in the image's label and
// in the bundle, and the pair that imports it is resolved. A link to a host off the list fails
// its build with a line naming the refused request and pip's own error; a step that connects
// straight to the index (every address of the host) reaches nothing. The index never sees a
// connection but the proxy's. The debian environment is removed first, so it really builds
// with debootstrap from --mirror and --keyring (this machine's Debian mirror, or CI's
// DEBIAN_MIRROR), and a pair that imports one of its Debian packages is resolved in it: the
// one cold debootstrap build of this package (TestImageBuildWithMirror checks the flags).
func TestBuildNetwork(t *testing.T) {
	ix := startPackageIndex(t)
	dir := writeNetSuite(t, ix)
	s, err := suite.Load(dir, suite.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, env := range []string{"fetch", "offlist", "direct", "pip"} {
		ref := s.Environments[env].Ref // named by the allowlist, so by the port: this test's own
		if env == "pip" {
			exec.Command("docker", "image", "rm", "-f", ref).Run()
		}
		t.Cleanup(func() { exec.Command("docker", "image", "rm", "-f", ref).Run() })
	}
	mirror := debianMirror(t)
	stdout, stderr, code := e2e.RunTender(t, "image", "build", "--suite", dir, "--mirror", mirror.URI,
		"--keyring", mirror.SignedBy)
	t.Logf("image build --suite:\n%s%s", stdout, stderr)
	built := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		f := strings.SplitN(line, " ", 3)
		built[f[0]] = f[2]
	}
	if code != cli.ExitFailure || !strings.HasPrefix(built["fetch"], "sha256:") ||
		!strings.HasPrefix(built["pip"], "sha256:") || !strings.Contains(stderr, "debootstrap") {
		t.Fatalf("image build --suite: exit %d, want 1 with pip (by debootstrap) and fetch built", code)
	}
	refused := fmt.Sprintf("the build network refused GET files.example.test:%d/files/%s (files.example.test:%d "+
		"is not in environments.offlist.network.allow (127.0.0.1:%d))", ix.Port, wheelName, ix.Port, ix.Port)
	if !strings.HasPrefix(built["offlist"], "FAILED: ") || !strings.Contains(built["offlist"], refused) ||
		!strings.Contains(built["offlist"], "403") || !strings.Contains(built["offlist"], "RUN pip install") {
		t.Errorf("offlist: %s\nwant FAILED with the step, pip's 403 and %q", built["offlist"], refused)
	}
	if d := built["direct"]; !strings.HasPrefix(d, "FAILED: ") || strings.Contains(d, "REACHED") ||
		!strings.Contains(d, "unreachable 127.0.0.1 ") || !strings.Contains(d, "non-zero code: 1") {
		t.Errorf("direct: %s\nwant FAILED with every address unreachable", d)
	}
	checkFetchImage(t, ix, built["fetch"], built["pip"])

	out := filepath.Join(t.TempDir(), "out")
	stdout, stderr, code = e2e.RunTender(t, "grade", dir, "--out", out)
	t.Logf("grade:\n%s", stdout)
	if code != cli.ExitOK {
		t.Fatalf("grade: exit %d\n%s%s", code, stdout, stderr)
	}
	results := clitest.ReadResults(t, out).Pairs
	if len(results) != 4 {
		t.Errorf("grade recorded %d pairs, want 4", len(results))
	}
	for _, r := range results {
		want := report.Error
		if r.ID == "in-fetch" || r.ID == "in-pip" {
			want = report.Resolved
		}
		if r.Verdict != want {
			t.Errorf("%s: %s %+v, want %s", r.ID, r.Verdict, r.Reasons, want)
		}
		if r.ID == "in-offlist" && (len(r.Reasons) == 0 || !strings.Contains(r.Reasons[0].Detail, refused)) {
			t.Errorf("in-offlist: reasons %+v; want the refusal in its verifier_failed detail", r.Reasons)
		}
	}
	checkBundleRecord(t, out, ix, s.Environments["fetch"].Ref, built["fetch"])
	if n := ix.Foreign.Load(); n != 0 {
		t.Errorf("the index got %d connection(s) from off the host's loopback: a build went around the proxy", n)
	}
}

// checkFetchImage: the fetch image starts from the pip environment's image, and its label
// records the index page and the wheel, with the wheel's digest.
func checkFetchImage(t *testing.T, ix *packageIndex, id, pipID string) {
	t.Helper()
	out, err := exec.Command("docker", "image", "inspect", "--format", "{{json .Config.Labels}}", id).Output()
	if err != nil {
		t.Fatal(err)
	}
	var labels map[string]string
	if err := json.Unmarshal(out, &labels); err != nil {
		t.Fatal(err)
	}
	if labels[docker.LabelFrom] != pipID {
		t.Errorf("the fetch image starts from %q, want the pip environment's %s", labels[docker.LabelFrom], pipID)
	}
	checkRecord(t, ix, []byte(labels[docker.LabelNetwork]))
}

func checkRecord(t *testing.T, ix *packageIndex, data []byte) {
	t.Helper()
	var rec netproxy.Record
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatalf("record %q: %v", data, err)
	}
	host := fmt.Sprintf("127.0.0.1:%d", ix.Port)
	sum := sha256.Sum256(ix.wheel)
	var page, wheel bool
	for _, q := range rec.Requests {
		page = page || q.Method == "GET" && q.Host == host && q.Path == "/simple/tinypkg/" && q.Status == 200
		wheel = wheel || q.Method == "GET" && q.Host == host && q.Path == "/files/"+wheelName &&
			q.SHA256 == hex.EncodeToString(sum[:]) && q.Bytes == int64(len(ix.wheel))
		if q.Refused != "" || q.Error != "" {
			t.Errorf("a request of the fetch build failed: %+v", q)
		}
	}
	if !page || !wheel || len(rec.Allow) != 1 || rec.Allow[0] != host {
		t.Errorf("record %s: want the index page and the wheel with its digest, allowed %s", data, host)
	}
}

// checkBundleRecord: the bundle holds the fetch environment's record, sealed, equal to the
// label of the image the bundle's inputs name.
func checkBundleRecord(t *testing.T, out string, ix *packageIndex, ref, id string) {
	t.Helper()
	m, err := bundle.Verify(out, nil, bundle.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	name := report.BuildNetworkJSON("fetch")
	sealed := false
	for _, f := range m.Files {
		sealed = sealed || f.Name == name
	}
	if !sealed || m.Inputs.Images[ref] != id {
		t.Errorf("bundle: %s sealed = %v, image %s = %s; want it sealed, and the image %s", name, sealed, ref,
			m.Inputs.Images[ref], id)
	}
	data, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s:\n%s", name, data)
	checkRecord(t, ix, data)
	for _, env := range []string{"offlist", "direct"} {
		if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(report.BuildNetworkJSON(env)))); err == nil {
			t.Errorf("the bundle holds a record of %s, whose build failed", env)
		}
	}
	d, err := docker.New(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(context.Background())
	label, err := d.BuildRecord(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	if json.Compact(&a, label) != nil || json.Compact(&b, data) != nil || a.String() != b.String() {
		t.Errorf("the bundle's record is not the image's label:\n%s\n%s", data, label)
	}
}
