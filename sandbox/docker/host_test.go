package docker

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEndpointOptions(t *testing.T) {
	certs := t.TempDir()
	for _, f := range []string{"ca.pem", "cert.pem", "key.pem"} {
		if err := os.WriteFile(filepath.Join(certs, f), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, row := range []struct {
		ep   Endpoint
		want string // "" when accepted
	}{
		{Endpoint{Host: "unix:///var/run/docker.sock"}, ""},
		{Endpoint{Host: "tcp://127.0.0.1:2375"}, ""},
		{Endpoint{Host: "tcp://localhost:2375"}, ""},
		{Endpoint{Host: "tcp://[::1]:2375"}, ""},
		{Endpoint{Host: "tcp://10.0.0.5:2375"}, "needs TLS"},
		{Endpoint{Host: "tcp://127.0.0.1.example.com:2375"}, "needs TLS"},
		{Endpoint{Host: "tcp://10.0.0.5:2376", CertDir: t.TempDir()}, "TLS file"},
		{Endpoint{Host: "unix:///s.sock", CertDir: certs}, "for tcp:// engines"},
		{Endpoint{Host: "ssh://me@host"}, "connection helper"},
		{Endpoint{Host: "http://host:2375"}, "give unix:///PATH or tcp://HOST:PORT"},
		{Endpoint{Host: "/var/run/docker.sock"}, "unable to parse"},
	} {
		_, err := endpointOptions(row.ep)
		switch {
		case row.want == "" && err != nil:
			t.Errorf("%+v: refused: %v", row.ep, err)
		case row.want != "" && (err == nil || !errors.Is(err, ErrEndpoint) || !strings.Contains(err.Error(), row.want)):
			t.Errorf("%+v: error %v, want ErrEndpoint naming %q", row.ep, err, row.want)
		}
	}
}
