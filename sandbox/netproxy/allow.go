package netproxy

import (
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Rule is one entry of an allowlist: a host name or an IP address, and a port (0 stands for
// the web's two, 80 and 443).
type Rule struct {
	Host string // lowercase name, or an address in netip's form
	Port int
}

// String is the rule as it is written back: host, host:port or [v6]:port.
func (r Rule) String() string {
	if r.Port == 0 {
		return r.Host
	}
	return net.JoinHostPort(r.Host, strconv.Itoa(r.Port))
}

// literal reports whether the rule names an address, not a host name.
func (r Rule) literal() bool {
	_, err := netip.ParseAddr(r.Host)
	return err == nil
}

var reHostName = regexp.MustCompile(`^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$`)

// ParseRule reads one allowlist entry: a host name or an IP address, with an optional :port
// (pypi.org, files.pythonhosted.org:443, 127.0.0.1:8080, [::1]:8080).
func ParseRule(s string) (Rule, error) {
	bad := func(why string) (Rule, error) {
		return Rule{}, fmt.Errorf(
			"%q %s; write a host name or an address with an optional :port, such as pypi.org, "+
				"files.pythonhosted.org:443 or 127.0.0.1:8080",
			s,
			why,
		)
	}
	if strings.Contains(s, "://") || strings.ContainsAny(s, "/?#@*\\ \t") {
		return bad("is not a host (no scheme, path, user or wildcard)")
	}
	host, port := s, 0
	if h, p, err := net.SplitHostPort(s); err == nil {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 || p != strconv.Itoa(n) {
			return bad("has a port that is not 1-65535")
		}
		host, port = h, n
	} else if strings.HasPrefix(s, "[") || strings.Count(s, ":") == 1 {
		return bad("is not host:port")
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Zone() != "" {
			return bad("has an IPv6 zone")
		}
		return Rule{Host: a.Unmap().String(), Port: port}, nil
	}
	if len(host) > 253 || !reHostName.MatchString(host) {
		return bad("is not a host name")
	}
	return Rule{Host: host, Port: port}, nil
}

// Allowlist is the hosts a build may reach, in the order written.
type Allowlist []Rule

// ParseAllowlist reads allowlist entries; a bad or repeated entry is an error naming it.
func ParseAllowlist(entries []string) (Allowlist, error) {
	var out Allowlist
	for i, e := range entries {
		r, err := ParseRule(e)
		if err != nil {
			return nil, fmt.Errorf("[%d]: %w", i, err)
		}
		if slices.Contains(out, r) {
			return nil, fmt.Errorf("[%d]: %q is listed twice; list each host once", i, e)
		}
		out = append(out, r)
	}
	return out, nil
}

// Strings writes the allowlist back, one canonical entry a string.
func (a Allowlist) Strings() []string {
	out := make([]string, len(a))
	for i, r := range a {
		out[i] = r.String()
	}
	return out
}

// match returns the rule that lets a build reach host:port, if one does.
func (a Allowlist) match(host string, port int) (Rule, bool) {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if addr, err := netip.ParseAddr(host); err == nil {
		host = addr.Unmap().String()
	}
	for _, r := range a {
		if r.Host == host && (r.Port == port || r.Port == 0 && (port == 80 || port == 443)) {
			return r, true
		}
	}
	return Rule{}, false
}

// hostPort splits an authority (host:port, or a host alone with the scheme's port).
func hostPort(authority string, defaultPort int) (string, int, error) {
	h, p, err := net.SplitHostPort(authority)
	if err != nil {
		if strings.Contains(err.Error(), "missing port") && defaultPort != 0 {
			return strings.Trim(authority, "[]"), defaultPort, nil
		}
		return "", 0, err
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 {
		return "", 0, fmt.Errorf("bad port %q", p)
	}
	return h, n, nil
}

// reachableByName reports whether an address may be reached through a host name: never a
// loopback, link-local, unspecified or multicast one, which would let a name (or a DNS answer
// that changes) lead a build to the host's own services or a cloud's metadata endpoint.
func reachableByName(a netip.Addr) bool {
	a = a.Unmap()
	return !(a.IsLoopback() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || a.IsUnspecified() ||
		a.IsMulticast() || a.IsInterfaceLocalMulticast())
}
