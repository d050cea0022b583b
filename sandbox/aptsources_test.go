package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

const deb822Sample = `Types: deb
# a comment line
URIs: http://mirror.example.test/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://mirror.example.test/debian-security
Suites: bookworm-security
Components: main
`

var aptCases = []struct {
	name  string
	files map[string]string
	want  string // URI picked for bookworm, "" for ErrNoMirror
	key   string
}{
	{"deb822", map[string]string{"etc/apt/sources.list.d/debian.sources": deb822Sample},
		"http://mirror.example.test/debian", "/usr/share/keyrings/debian-archive-keyring.gpg"},
	{
		"one-line",
		map[string]string{
			"etc/apt/sources.list": "# comment\ndeb-src http://src.test/debian bookworm main\ndeb [arch=amd64 signed-by=/k.gpg] http://one.test/debian bookworm main contrib\n",
		},
		"http://one.test/debian",
		"/k.gpg",
	},
	{"disabled files are ignored", map[string]string{
		"etc/apt/sources.list.d/old.sources.disabled-by-farm": deb822Sample,
		"etc/apt/sources.list.d/x.list.save":                  "deb http://x.test/debian bookworm main\n"}, "", ""},
	{
		"Enabled: no",
		map[string]string{"etc/apt/sources.list.d/a.sources": "Enabled: no\n" + deb822Sample[:150]},
		"",
		"",
	},
	{"other suite only", map[string]string{"etc/apt/sources.list": "deb http://u.test/ubuntu noble main\n"}, "", ""},
	{
		"component must include main",
		map[string]string{"etc/apt/sources.list": "deb http://c.test/debian bookworm contrib\n"},
		"",
		"",
	},
	{
		"unusable scheme",
		map[string]string{
			"etc/apt/sources.list": "deb cdrom:[Debian]/ bookworm main\ndeb http://ok.test/d bookworm main\n",
		},
		"http://ok.test/d",
		"",
	},
	{
		"inline key is not a path",
		map[string]string{
			"etc/apt/sources.list.d/k.sources": "Types: deb\nURIs: https://k.test/debian\nSuites: bookworm\nComponents: main\nSigned-By:\n -----BEGIN PGP PUBLIC KEY BLOCK-----\n .\n abc\n",
		},
		"https://k.test/debian",
		"",
	},
	{"list file before sources.list.d", map[string]string{
		"etc/apt/sources.list":                  "deb http://first.test/debian bookworm main\n",
		"etc/apt/sources.list.d/debian.sources": deb822Sample}, "http://first.test/debian", ""},
}

func TestFindMirror(t *testing.T) {
	for _, tt := range aptCases {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for name, content := range tt.files {
				p := filepath.Join(root, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := FindMirror(root, "bookworm")
			if tt.want == "" {
				if !errors.Is(err, ErrNoMirror) {
					t.Errorf("FindMirror = %+v, %v; want ErrNoMirror", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(AptSource{URI: tt.want, SignedBy: tt.key}, got,
				cmpopts.IgnoreFields(AptSource{}, "Suites", "Components", "File")); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestFindMirrorOnThisMachine(t *testing.T) {
	// The image build depends on it: the machine's own sources must name a bookworm mirror.
	src, err := FindMirror("/", "bookworm")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("mirror %s from %s", src.URI, src.File)
}

func FuzzAptSources(f *testing.F) {
	for _, tt := range aptCases {
		for _, c := range tt.files {
			f.Add(c)
		}
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, s := range append(parseDeb822(text, "f"), parseOneLine(text, "f")...) {
			if !usableURI(s.URI) || strings.ContainsAny(s.URI, " \t\n") {
				t.Fatalf("unusable URI accepted: %q", s.URI)
			}
			if s.SignedBy != "" && strings.ContainsAny(s.SignedBy, " \t\n") {
				t.Fatalf("keyring path with spaces: %q", s.SignedBy)
			}
		}
		for _, s := range parseOneLine(text, "f") {
			if len(s.Suites) != 1 {
				t.Fatalf("one-line entry with %d suites: %+v", len(s.Suites), s)
			}
		}
	})
}

// ubuntuRunner is the apt configuration of GitHub's hosted Ubuntu runners: Ubuntu suites
// behind a mirror+file: URI, plus third-party sources, and no Debian suite at all.
var ubuntuRunner = map[string]string{
	"etc/apt/sources.list": `deb mirror+file:/etc/apt/apt-mirrors.txt jammy main restricted
deb mirror+file:/etc/apt/apt-mirrors.txt jammy-updates main restricted
deb mirror+file:/etc/apt/apt-mirrors.txt jammy universe
deb mirror+file:/etc/apt/apt-mirrors.txt jammy-updates universe
deb mirror+file:/etc/apt/apt-mirrors.txt jammy multiverse
deb mirror+file:/etc/apt/apt-mirrors.txt jammy-backports main restricted universe multiverse
deb mirror+file:/etc/apt/apt-mirrors.txt jammy-security main restricted
deb mirror+file:/etc/apt/apt-mirrors.txt jammy-security universe
`,
	"etc/apt/apt-mirrors.txt":                                "http://azure.ubuntu-mirror.example.test/ubuntu/\tpriority:1\nhttps://archive.ubuntu-mirror.example.test/ubuntu/\tpriority:2\nhttps://security.ubuntu-mirror.example.test/ubuntu/\tpriority:3\n",
	"etc/apt/sources.list.d/microsoft-prod.list":             "deb [arch=amd64,arm64,armhf] https://vendor.example.test/ubuntu/22.04/prod jammy main\n",
	"etc/apt/sources.list.d/ondrej-ubuntu-php-jammy.sources": "Types: deb\nURIs: https://ppa.example.test/ondrej/php/ubuntu/\nSuites: jammy\nComponents: main\nSigned-By: /etc/apt/keyrings/ondrej.gpg\n",
}

// TestFindMirrorOnAnUbuntuRunner: no Debian mirror there, and the one-line error says what
// the sources list and what to pass instead.
func TestFindMirrorOnAnUbuntuRunner(t *testing.T) {
	root := writeAptRoot(t, ubuntuRunner)
	_, err := FindMirror(root, "bookworm")
	if !errors.Is(err, ErrNoMirror) {
		t.Fatalf("FindMirror: %v, want ErrNoMirror", err)
	}
	msg := err.Error()
	for _, w := range []string{"--mirror", "--keyring", "debian-archive-keyring", "jammy", "mirror+file:/etc/apt/apt-mirrors.txt is not a URI debootstrap can use"} {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q does not contain %q", msg, w)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("want one line, got %q", msg)
	}
	// With the mirror option the recipe does not read the sources at all.
	uri, key, err := Recipe{Suite: "bookworm", Mirror: "http://m.test/debian", Keyring: "/k.gpg"}.Source()
	if err != nil || uri != "http://m.test/debian" || key != "/k.gpg" {
		t.Errorf("Source() = %q, %q, %v", uri, key, err)
	}
}

func writeAptRoot(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestFindMirrorOfAnotherRelease: a machine whose apt sources name bookworm's mirror builds a
// bullseye image from the same mirror, with the same keyring; an Ubuntu suite, or a pocket
// (bookworm-security), never stands for a Debian release.
func TestFindMirrorOfAnotherRelease(t *testing.T) {
	root := writeAptRoot(t, map[string]string{"etc/apt/sources.list.d/debian.sources": `Types: deb
URIs: http://mirror.example/debian-security
Suites: bookworm-security
Components: main

Types: deb
URIs: http://mirror.example/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
`})
	got, err := FindMirror(root, "bullseye")
	if err != nil || got.URI != "http://mirror.example/debian" || !slices.Equal(got.Suites, []string{"bullseye"}) ||
		got.SignedBy != "/usr/share/keyrings/debian-archive-keyring.gpg" {
		t.Errorf("FindMirror(bullseye) = %+v, %v; want bookworm's mirror and keyring", got, err)
	}
	if _, err := FindMirror(root, "jammy"); !errors.Is(err, ErrNoMirror) {
		t.Errorf("FindMirror(jammy) = %v; an Ubuntu suite is no Debian mirror's", err)
	}
}
