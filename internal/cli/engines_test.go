package cli

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tender-grader/tender/sandbox/docker"
)

func TestEngineList(t *testing.T) {
	env := map[string]string{}
	inv := &invocation{Getenv: func(k string) string { return env[k] }}
	if got := engineList(inv, nil); len(got) != 0 {
		t.Errorf("no flag and no TENDER_ENGINES: %v, want none (DOCKER_HOST's engine)", got)
	}
	env["TENDER_ENGINES"] = "unix:///a.sock, unix:///b.sock\ntcp://127.0.0.1:2375"
	if diff := cmp.Diff([]string{"unix:///a.sock", "unix:///b.sock", "tcp://127.0.0.1:2375"}, engineList(inv, nil)); diff != "" {
		t.Errorf("TENDER_ENGINES (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"unix:///c.sock"}, engineList(inv, []string{"unix:///c.sock"})); diff != "" {
		t.Errorf("--engine must win over TENDER_ENGINES (-want +got):\n%s", diff)
	}
}

func TestEndpoint(t *testing.T) {
	env := map[string]string{"DOCKER_CERT_PATH": "/certs/default"}
	inv := &invocation{Getenv: func(k string) string { return env[k] }}
	for _, row := range []struct {
		raw  string
		want docker.Endpoint
		err  string
	}{
		{"unix:///tmp/e.sock", docker.Endpoint{Host: "unix:///tmp/e.sock"}, ""},
		{"tcp://h:2376", docker.Endpoint{Host: "tcp://h:2376", CertDir: "/certs/default"}, ""},
		{"tcp://h:2376?certs=/certs/h", docker.Endpoint{Host: "tcp://h:2376", CertDir: "/certs/h"}, ""},
		{"tcp://h:2376?tlsverify=0", docker.Endpoint{}, "the only option is ?certs=DIR"},
		{"tcp://h:2376?certs=a&certs=b", docker.Endpoint{}, "the only option is ?certs=DIR"},
	} {
		got, err := endpoint(inv, row.raw)
		if row.err != "" {
			if err == nil || !strings.Contains(err.Error(), row.err) {
				t.Errorf("%s: error %v, want %q", row.raw, err, row.err)
			}
			continue
		}
		if err != nil || got != row.want {
			t.Errorf("%s: %+v, %v; want %+v", row.raw, got, err, row.want)
		}
	}
}

func TestEngineFlagRefusals(t *testing.T) {
	for _, row := range []struct {
		args []string
		want string
	}{
		{[]string{"grade", repoRoot + "/fixtures/demo", "--out", "OUT", "--trust-local-execution", "--engine", "unix:///x"},
			"--trust-local-execution runs no engine"},
		{[]string{"validate", repoRoot + "/fixtures/demo", "--engine", "unix:///x"}, "--concurrency and --engine need --run"},
		{[]string{"grade", repoRoot + "/fixtures/demo", "--out", "OUT", "--engine", "ssh://me@host"}, "ssh:// needs docker/cli"},
		{[]string{"grade", repoRoot + "/fixtures/demo", "--out", "OUT", "--engine", "tcp://192.0.2.1:2375"},
			"a TCP engine needs TLS"},
	} {
		args := row.args
		for i, a := range args {
			if a == "OUT" {
				args[i] = t.TempDir() + "/out"
			}
		}
		_, stderr, code := runTender(t, args...)
		if code != exitUsage || !strings.Contains(stderr, row.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d naming %q", row.args, code, stderr, exitUsage, row.want)
		}
	}
}
