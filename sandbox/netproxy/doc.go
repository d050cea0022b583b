// Package netproxy is the network of an image build that is allowed one: an HTTP forward
// proxy that lets a build fetch from the hosts of its allowlist and from nothing else, and
// records every request it is asked to make. Plain http is forwarded (GET and HEAD), and the
// record keeps the host, the path, the bytes and the sha256 of the body; https goes through
// CONNECT tunnels, whose record keeps the host, the port and the bytes each way (the content is
// end-to-end TLS, which the proxy never sees).
//
// The proxy serves any net.Listener. In a build, the listener is a Mux: the frames of a relay
// (relay.py, run by sandbox/docker in a container on the build's internal network) that
// accepts the build's connections and carries them over its standard streams to Tender. The
// relay is the build's only peer, and it has no way out but those streams, so a build step that
// ignores the proxy variables reaches nothing.
//
// This package must never dial a host:port its allowlist does not name, never reach a
// loopback, link-local or unspecified address through a host name (an allowlist names such an
// address itself, or it is refused), never forward a request that is not in proxy form, and
// never import a container engine's SDK.
package netproxy
