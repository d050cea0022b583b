package envs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tender-grader/tender/integration/internal/e2e"
	"github.com/tender-grader/tender/internal/clitest"
)

// TestPoolEngineOverTLS grades over the host engine and a second dockerd reached by
// tcp:// with mutual TLS (certificates made for the test), and checks that a client whose CA
// does not match the server's leaves that engine out instead of trusting it.
func TestPoolEngineOverTLS(t *testing.T) {
	bin := clitest.BuildTender(t, e2e.RepoRoot)
	certs := t.TempDir()
	good, wrongCA := filepath.Join(certs, "client"), filepath.Join(certs, "wrong-ca")
	ca := newCA(t)
	ca.issue(t, certs, "server", true)
	ca.issue(t, good, "client", false)
	newCA(t).issue(t, wrongCA, "client", false) // a client that trusts another CA
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	clitest.Must(t, err)
	addr := ln.Addr().String()
	ln.Close()
	second := startDockerd(t, "-H", "tcp://"+addr, "--tlsverify", "--tlscacert", filepath.Join(certs, "ca.pem"),
		"--tlscert", filepath.Join(certs, "server", "cert.pem"), "--tlskey", filepath.Join(certs, "server", "key.pem"))
	tlsHost := "tcp://" + addr

	g := poolGrade(t, bin, e2e.OrderedSuite(t, "gold-fix", "gold-fix"), nil, "--concurrency", "2",
		"--engine", hostEngine(), "--engine", tlsHost+"?certs="+good)
	g.check(t, 2)
	shares := g.shares(t, hostEngine(), tlsHost)
	if shares[1] == 0 || !strings.Contains(g.stderr, "2 of 2 engine(s) ready") {
		t.Errorf("the TLS engine took no check (shares %v):\n%s", shares, g.stderr)
	}
	t.Logf("over TLS: checks per engine %v", shares)
	noContainers(t, g.pid, hostEngine(), second.host) // the same engine, through its socket

	out, err := exec.Command(bin, "grade", e2e.OrderedSuite(t, "gold-fix"), "--out", filepath.Join(t.TempDir(), "o"),
		"--engine", tlsHost+"?certs="+wrongCA).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "engine "+tlsHost+" is left out") ||
		!strings.Contains(string(out), "certificate") {
		t.Errorf("a client with the wrong CA: %v\n%s\nwant the engine left out over its certificate", err, out)
	}
}

type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	clitest.Must(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "tender test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	clitest.Must(t, err)
	cert, err := x509.ParseCertificate(der)
	clitest.Must(t, err)
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue writes dir/ca.pem, dir/cert.pem and dir/key.pem (the DOCKER_CERT_PATH layout); a
// server's certificate names 127.0.0.1, and the CA goes to dir's parent too.
func (ca *testCA) issue(t *testing.T, dir, name string, server bool) {
	t.Helper()
	if server {
		dir = filepath.Join(dir, name)
		clitest.Must(t, os.WriteFile(filepath.Join(filepath.Dir(dir), "ca.pem"), ca.pem, 0o644))
	}
	clitest.Must(t, os.MkdirAll(dir, 0o755))
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	clitest.Must(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	clitest.Must(t, err)
	kb, err := x509.MarshalECPrivateKey(key)
	clitest.Must(t, err)
	clitest.Must(t, os.WriteFile(filepath.Join(dir, "ca.pem"), ca.pem, 0o644))
	clitest.Must(
		t,
		os.WriteFile(
			filepath.Join(dir, "cert.pem"),
			pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
			0o644,
		),
	)
	clitest.Must(
		t,
		os.WriteFile(
			filepath.Join(dir, "key.pem"),
			pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}),
			0o600,
		),
	)
}
