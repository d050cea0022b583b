package netproxy

import (
	"strings"
	"testing"
)

func TestParseRule(t *testing.T) {
	good := []struct{ in, want string }{
		{"pypi.org", "pypi.org"},
		{"PyPI.org.", "pypi.org"},
		{"files.pythonhosted.org:443", "files.pythonhosted.org:443"},
		{"127.0.0.1:8080", "127.0.0.1:8080"},
		{"10.0.0.7", "10.0.0.7"},
		{"[::1]:8080", "[::1]:8080"},
		{"[::ffff:127.0.0.1]:80", "127.0.0.1:80"},
		{"deb.debian.org:80", "deb.debian.org:80"},
		{"::1", "::1"},
	}
	for _, tt := range good {
		r, err := ParseRule(tt.in)
		if err != nil || r.String() != tt.want {
			t.Errorf("ParseRule(%q) = %v, %v; want %s", tt.in, r, err, tt.want)
		}
	}
	bad := []struct{ in, want string }{
		{"https://pypi.org", "no scheme"},
		{"pypi.org/simple", "no scheme, path"},
		{"*.pythonhosted.org", "wildcard"},
		{"user@pypi.org", "user"},
		{"pypi.org:0", "port that is not 1-65535"},
		{"pypi.org:65536", "port that is not 1-65535"},
		{"pypi.org:08", "port that is not 1-65535"},
		{"pypi.org:", "port that is not 1-65535"},
		{"-pypi.org", "not a host name"},
		{"pypi..org", "not a host name"},
		{"", "not a host name"},
		{"[fe80::1%eth0]:80", "zone"},
		{"[::1]", "is not host:port"},
		{"pypi.org:http", "port that is not 1-65535"},
	}
	for _, tt := range bad {
		_, err := ParseRule(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "such as pypi.org") {
			t.Errorf("ParseRule(%q) = %v; want an error saying %q and how to write one", tt.in, err, tt.want)
		}
	}
}

func TestParseAllowlistRefusesARepeat(t *testing.T) {
	_, err := ParseAllowlist([]string{"pypi.org", "PYPI.org"})
	if err == nil || !strings.Contains(err.Error(), "[1]") || !strings.Contains(err.Error(), "twice") {
		t.Errorf("a repeated host: %v; want an error naming entry [1]", err)
	}
}

func TestAllowlistMatch(t *testing.T) {
	a, err := ParseAllowlist([]string{"pypi.org", "127.0.0.1:8080", "[::1]:9"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		host string
		port int
		want bool
	}{
		{"pypi.org", 443, true},
		{"PYPI.ORG.", 80, true},
		{"pypi.org", 8443, false}, // a bare name is the web's two ports only
		{"evil.pypi.org", 443, false},
		{"pypi.org.evil", 443, false},
		{"127.0.0.1", 8080, true},
		{"127.0.0.1", 8081, false},
		{"::ffff:127.0.0.1", 8080, true},
		{"localhost", 8080, false}, // a name is not the address it resolves to
		{"::1", 9, true},
	} {
		if _, got := a.match(tt.host, tt.port); got != tt.want {
			t.Errorf("match(%s, %d) = %v, want %v", tt.host, tt.port, got, tt.want)
		}
	}
}
