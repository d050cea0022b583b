package docker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/moby/moby/client"
)

// Endpoint names one engine by its address, for a pool of engines: unix:///PATH, or
// tcp://HOST:PORT with TLS. A TCP engine is root on its host, and a check's hidden assets
// travel to it, so plain TCP is refused except on loopback.
type Endpoint struct {
	Host string
	// CertDir holds ca.pem, cert.pem and key.pem (the layout of DOCKER_CERT_PATH) for a
	// tcp:// host: the server is verified against ca.pem and Tender presents cert.pem.
	CertDir string
}

// ErrEndpoint means an engine address Tender will not use as given.
var ErrEndpoint = errors.New("engine address")

// NewAt connects to the engine at ep, whatever DOCKER_HOST says, negotiates the API version
// and pings it.
func NewAt(ctx context.Context, ep Endpoint) (*Backend, error) {
	opts, err := endpointOptions(ep)
	if err != nil {
		return nil, err
	}
	return open(ctx, "is that daemon running, and is its address right?", opts...)
}

func endpointOptions(ep Endpoint) ([]client.Opt, error) {
	u, err := client.ParseHostURL(ep.Host)
	if err != nil {
		return nil, fmt.Errorf("%w %q: %w", ErrEndpoint, ep.Host, err)
	}
	opts := []client.Opt{client.WithHost(ep.Host), client.WithAPIVersionFromEnv()}
	switch u.Scheme {
	case "unix":
		if ep.CertDir != "" {
			return nil, fmt.Errorf("%w %s: TLS files are for tcp:// engines, not a socket", ErrEndpoint, ep.Host)
		}
		return opts, nil
	case "tcp":
	case "ssh":
		return nil, fmt.Errorf("%w %s: ssh:// needs docker/cli's connection helper, which this build does not "+
			"include; forward the engine's socket (ssh -nNT -L /tmp/engine.sock:/var/run/docker.sock HOST) "+
			"and give unix:///tmp/engine.sock", ErrEndpoint, ep.Host)
	default:
		return nil, fmt.Errorf("%w %s: give unix:///PATH or tcp://HOST:PORT", ErrEndpoint, ep.Host)
	}
	if ep.CertDir == "" {
		if loopback(u.Host) {
			return opts, nil
		}
		return nil, fmt.Errorf("%w %s: a TCP engine needs TLS (hidden assets travel to it, and it is root "+
			"on its host); give its certificate directory (ca.pem, cert.pem, key.pem) with ?certs=DIR or "+
			"DOCKER_CERT_PATH", ErrEndpoint, ep.Host)
	}
	files := []string{"ca.pem", "cert.pem", "key.pem"}
	for i, f := range files {
		files[i] = filepath.Join(ep.CertDir, f)
		if _, err := os.Stat(files[i]); err != nil {
			return nil, fmt.Errorf("%w %s: TLS file: %w", ErrEndpoint, ep.Host, err)
		}
	}
	return append(opts, client.WithTLSClientConfig(files[0], files[1], files[2])), nil
}

func loopback(hostport string) bool {
	h, _, err := net.SplitHostPort(hostport)
	if err != nil {
		h = hostport
	}
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// Host is the engine's address as the client dials it.
func (d *Backend) Host() string { return d.cli.DaemonHost() }

// Ping reports whether the engine answers.
func (d *Backend) Ping(ctx context.Context) error {
	if _, err := d.cli.Ping(ctx, client.PingOptions{}); err != nil {
		return fmt.Errorf("%w: %s does not answer: %w", ErrEngine, d.Host(), err)
	}
	return nil
}
