package bundle

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// hostileEnvelopes are envelopes a hostile bundle could carry, built from a genuine unsigned
// one. Each must be refused as malformed. They also seed the fuzz targets.
type hostileCase struct {
	name string
	data []byte
	want string // in the error text
}

func hostileEnvelopes(t testing.TB) []hostileCase {
	t.Helper()
	dir, _ := sealedBundle(t, nil)
	genuine, err := os.ReadFile(filepath.Join(dir, EnvelopeName))
	if err != nil {
		t.Fatal(err)
	}
	env := readEnvelopeFile(t, dir)
	payload, _ := base64.StdEncoding.DecodeString(env.Payload)
	wrap := func(p []byte) []byte {
		return []byte(
			`{"payloadType":"` + PayloadType + `","payload":"` + base64.StdEncoding.EncodeToString(
				p,
			) + `","signatures":[]}`,
		)
	}
	edit := func(f func(st map[string]any)) []byte {
		var st map[string]any
		json.Unmarshal(payload, &st)
		f(st)
		b, _ := json.Marshal(st)
		return wrap(b)
	}
	// subject adds a subject in sorted position, so only the row's own flaw is wrong.
	subject := func(name string, digest map[string]any) []byte {
		return edit(func(st map[string]any) {
			subs := append(subjectsOf(st), map[string]any{"name": name, "digest": digest})
			sort.SliceStable(subs, func(i, j int) bool {
				return subs[i].(map[string]any)["name"].(string) < subs[j].(map[string]any)["name"].(string)
			})
			st["subject"] = subs
		})
	}
	// dependency adds a resolved dependency in sorted position.
	dependency := func(name string, digest map[string]any, extra map[string]any) []byte {
		return edit(func(st map[string]any) {
			pred := st["predicate"].(map[string]any)
			d := map[string]any{"name": name, "digest": digest}
			for k, v := range extra {
				d[k] = v
			}
			deps := append(pred["resolvedDependencies"].([]any), d)
			sort.SliceStable(deps, func(i, j int) bool {
				return deps[i].(map[string]any)["name"].(string) < deps[j].(map[string]any)["name"].(string)
			})
			pred["resolvedDependencies"] = deps
		})
	}
	sha := map[string]any{"sha256": digestBytes([]byte("TENDER-CANARY"))}
	sig := base64.StdEncoding.EncodeToString(make([]byte, 64))
	keyid := strings.Repeat("a", 64)
	return []hostileCase{
		{"not JSON", []byte("PASSED"), "not JSON"},
		{"empty", []byte{}, "not JSON"},
		{"JSON null", []byte("null"), "payloadType"},
		{"trailing data", append(append([]byte{}, genuine...), []byte(`{}`)...), "trailing data"},
		{
			"duplicate payload key",
			bytes.Replace(genuine, []byte(`"payload":`), []byte(`"payload":"e30=","payload":`), 1),
			"repeats the key",
		},
		{
			"unknown envelope field",
			bytes.Replace(genuine, []byte(`"payload":`), []byte(`"extra":1,"payload":`), 1),
			"unknown field",
		},
		{
			"wrong payload type",
			bytes.Replace(genuine, []byte(PayloadType), []byte("application/json"), 1),
			"payloadType",
		},
		{
			"URL base64 payload",
			[]byte(
				`{"payloadType":"` + PayloadType + `","payload":"` + base64.URLEncoding.EncodeToString(
					append(payload, 0xfb, 0xff),
				) + `","signatures":[]}`,
			),
			"base64",
		},
		{
			"two signatures",
			[]byte(
				`{"payloadType":"` + PayloadType + `","payload":"` + env.Payload + `","signatures":[{"keyid":"` + keyid + `","sig":"` + sig + `"},{"keyid":"` + keyid + `","sig":"` + sig + `"}]}`,
			),
			"2 signatures",
		},
		{
			"short signature",
			[]byte(
				`{"payloadType":"` + PayloadType + `","payload":"` + env.Payload + `","signatures":[{"keyid":"` + keyid + `","sig":"AAAA"}]}`,
			),
			"ed25519 signature",
		},
		{
			"bad keyid",
			[]byte(
				`{"payloadType":"` + PayloadType + `","payload":"` + env.Payload + `","signatures":[{"keyid":"../../etc","sig":"` + sig + `"}]}`,
			),
			"keyid",
		},
		{"payload with spaces", wrap(bytes.Replace(payload, []byte(`":`), []byte(`": `), 1)), "canonical"},
		{
			"payload duplicate key",
			wrap(bytes.Replace(payload, []byte(`{"_type":`), []byte(`{"_type":"x","_type":`), 1)),
			"canonical",
		},
		{"payload trailing data", wrap(append(append([]byte{}, payload...), '1')), "trailing data"},
		{"payload not JSON", wrap([]byte("PASSED test_x")), "not JSON"},
		{
			"unknown predicate field",
			edit(func(st map[string]any) { st["predicate"].(map[string]any)["verdict"] = "resolved" }),
			"unknown field",
		},
		{"unknown statement field", edit(func(st map[string]any) { st["extra"] = "x" }), "unknown field"},
		{"wrong _type", edit(func(st map[string]any) { st["_type"] = "https://in-toto.io/Statement/v0.1" }), "_type"},
		{
			"wrong predicateType",
			edit(func(st map[string]any) { st["predicateType"] = "https://slsa.dev/provenance/v1" }),
			"predicateType",
		},
		{
			"created not a time",
			edit(func(st map[string]any) { st["predicate"].(map[string]any)["created"] = "yesterday" }),
			"RFC 3339",
		},
		{
			"volatile emptied",
			edit(func(st map[string]any) { st["predicate"].(map[string]any)["volatile"] = []any{} }),
			"volatile",
		},
		{"tool is a number", edit(func(st map[string]any) { st["predicate"].(map[string]any)["tool"] = 1 }), "schema"},
		{"no subjects", edit(func(st map[string]any) { st["subject"] = []any{} }), "at least one subject"},
		{"subject ../canary", subject("../canary.txt", sha), "escapes"},
		{"subject absolute", subject("/etc/passwd", sha), "absolute"},
		{"subject a/../b", subject("pairs/../results.json", sha), "escapes"},
		{"subject ./a", subject("./results.json", sha), "not clean"},
		{"subject a//b", subject("pairs//p1", sha), "not clean"},
		{"subject trailing slash", subject("pairs/", sha), "not clean"},
		{"subject backslash", subject(`pairs\..\..\x`, sha), "backslash"},
		{"subject dot", subject(".", sha), "bundle itself"},
		{"subject empty", subject("", sha), "empty path"},
		{"subject control char", subject("a\x1bb", sha), "printable"},
		{"subject is the envelope", subject(EnvelopeName, sha), "cannot list itself"},
		{"dependency escape", dependency("suite/../../x", sha, nil), "escapes"},
		{"dependency absolute", dependency("/etc/passwd", sha, nil), "absolute"},
		{"dependency empty image", dependency("image/", sha, nil), "image name"},
		{"dependency duplicated", dependency("suite/tender.yaml", sha, nil), "unique"},
		{"dependency short digest", dependency("suite/x", map[string]any{"sha256": "abc"}, nil), "hex"},
		{"dependency unknown field", dependency("suite/x", sha, map[string]any{"uri": "file:///etc/passwd"}),
			"unknown field"},
		{"dependency unsorted", edit(func(st map[string]any) {
			pred := st["predicate"].(map[string]any)
			pred["resolvedDependencies"] = append(pred["resolvedDependencies"].([]any),
				map[string]any{"name": "a-first", "digest": sha})
		}), "sorted"},
		{"dependencies missing", edit(func(st map[string]any) {
			delete(st["predicate"].(map[string]any), "resolvedDependencies")
		}), "resolvedDependencies"},
		{"images map of the first format", edit(func(st map[string]any) {
			st["predicate"].(map[string]any)["images"] = map[string]any{}
		}), "unknown field"},
		{"subject unsorted", edit(func(st map[string]any) {
			st["subject"] = append(subjectsOf(st), map[string]any{"name": "a-first.txt", "digest": sha})
		}), "sorted"},
		{"subject duplicated", subject("summary.md", sha), "unique"},
		{
			"subject uppercase digest",
			subject("zz.txt", map[string]any{"sha256": strings.ToUpper(digestBytes(nil))}),
			"lowercase hex",
		},
		{"subject short digest", subject("zz.txt", map[string]any{"sha256": "abc"}), "hex"},
		{
			"subject sha512 only",
			subject("zz.txt", map[string]any{"sha512": strings.Repeat("a", 128)}),
			"exactly one digest",
		},
		{
			"subject two digests",
			subject("zz.txt", map[string]any{"sha256": digestBytes(nil), "sha1": strings.Repeat("a", 40)}),
			"exactly one digest",
		},
		{"deep nesting", []byte(strings.Repeat("[", 100000) + strings.Repeat("]", 100000)), "nested too deeply"},
	}
}

func TestVerifyRefusesHostileEnvelopes(t *testing.T) {
	canary := []byte("TENDER-CANARY")
	for _, tc := range hostileEnvelopes(t) {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "bundle")
			if err := os.CopyFS(dir, os.DirFS("testdata/bundle")); err != nil {
				t.Fatal(err)
			}
			// The canary sits where "../canary.txt" points, with the digest the row lists.
			writeFile(t, filepath.Join(filepath.Dir(dir), "canary.txt"), canary)
			writeFile(t, filepath.Join(dir, EnvelopeName), tc.data)
			m, err := Verify(dir, nil, VerifyOptions{})
			wantFileError(t, err, ErrMalformed, EnvelopeName)
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not say %q", err, tc.want)
			}
			if m != nil {
				t.Fatal("a refused envelope returned a manifest")
			}
		})
	}
}

func TestVerifyRefusesOversizeEnvelope(t *testing.T) {
	dir, _ := sealedBundle(t, testKey)
	path := filepath.Join(dir, EnvelopeName)
	data, _ := os.ReadFile(path)
	_, err := Verify(dir, testPub, VerifyOptions{MaxEnvelopeSize: int64(len(data) - 1)})
	wantFileError(t, err, ErrMalformed, EnvelopeName)
	if _, err := Verify(dir, testPub, VerifyOptions{MaxEnvelopeSize: int64(len(data))}); err != nil {
		t.Fatalf("an envelope exactly at the cap: %v", err)
	}
	// The built-in cap holds whatever the options say.
	huge := append(bytes.Repeat([]byte(" "), MaxEnvelopeSize), data...)
	writeFile(t, path, huge)
	_, err = Verify(dir, testPub, VerifyOptions{MaxEnvelopeSize: 1 << 40})
	wantFileError(t, err, ErrMalformed, EnvelopeName)
}

func TestSealRefusesBadInputs(t *testing.T) {
	hex := digestBytes(nil)
	for _, tc := range []struct {
		name string
		edit func(in *Inputs)
		want string
	}{
		{"no tool", func(in *Inputs) { in.Tool = "" }, "Tool"},
		{"tool with a newline", func(in *Inputs) { in.Tool = "tender\nv1" }, "Tool"},
		{"input path with ..", func(in *Inputs) { in.Files["../etc/passwd"] = hex }, "escapes"},
		{"absolute input path", func(in *Inputs) { in.Files["/etc/passwd"] = hex }, "absolute"},
		{"input under image/", func(in *Inputs) { in.Files["image/x"] = hex }, "reserved"},
		{"input digest uppercase", func(in *Inputs) { in.Files["suite/x"] = strings.ToUpper(hex) }, "lowercase hex"},
		{"image id without sha256:", func(in *Inputs) { in.Images["x"] = hex }, "sha256:"},
		{"image name with a space", func(in *Inputs) { in.Images["a b"] = "sha256:" + hex }, "sha256:"},
		{"option with an empty name", func(in *Inputs) { in.Options[""] = "x" }, "non-empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := fixtureBundle(t)
			in := testInputs()
			tc.edit(&in)
			_, err := Seal(dir, in, nil, testTime)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Seal: got %v, want an error mentioning %q", err, tc.want)
			}
			if _, statErr := os.Stat(filepath.Join(dir, EnvelopeName)); statErr == nil {
				t.Fatal("Seal wrote an envelope for bad inputs")
			}
		})
	}
	t.Run("zero time", func(t *testing.T) {
		if _, err := Seal(fixtureBundle(t), testInputs(), nil, time.Time{}); err == nil ||
			!strings.Contains(err.Error(), "zero time") {
			t.Fatalf("got %v, want a refusal of the zero time", err)
		}
	})
	t.Run("short key", func(t *testing.T) {
		if _, err := Seal(fixtureBundle(t), testInputs(), testKey[:10], testTime); !errors.Is(err, ErrKey) {
			t.Fatalf("got %v, want ErrKey", err)
		}
	})
}
