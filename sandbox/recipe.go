package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
)

// Recipe is an offline verifier image: a debootstrap rootfs of one Debian suite with the
// runner's packages, imported with a fixed user, working directory and environment.
type Recipe struct {
	Name     string   // image reference, e.g. "tender-verifier/pytest"
	Suite    string   // Debian suite, e.g. "bookworm"
	Variant  string   // debootstrap variant, e.g. "minbase"
	Packages []string // passed to --include
	Env      []string // KEY=value lines baked into the image besides PATH
	// Mirror overrides the apt sources lookup. It is not part of the digest: any mirror of
	// the suite gives the same packages.
	Mirror string
	// Keyring is the keyring file that checks Mirror's signatures (debian-archive-keyring
	// on a host that is not Debian). Not part of the digest either.
	Keyring string
}

// VerifierUser is the uid:gid every check's commands run as, and the user of every built image.
const VerifierUser = "65532:65532"

// VerifierBoundingCaps is the bounding set of a verifier's processes, as /proc shows it: CHOWN
// and FOWNER, which Tender's own root processes use to own the evaluator's files. A process of
// the verifier user has none of them (effective and permitted sets are empty), and
// no-new-privileges keeps it from gaining one.
const VerifierBoundingCaps = "0000000000000009"

// RecipeFormat changes whenever the way an image is built changes, so old images rebuild.
const RecipeFormat = "tender-recipe/1"

// Built-in images. Their recipes need only debootstrap and the machine's apt mirror.
const (
	ImagePytest = "tender-verifier/pytest"
	ImageGo     = "tender-verifier/go"
)

var builtins = map[string]Recipe{
	ImagePytest: {
		Name: ImagePytest, Suite: "bookworm", Variant: "minbase",
		Packages: []string{"python3", "python3-pytest"},
		Env:      []string{"PYTHONDONTWRITEBYTECODE=1", "PYTHONUNBUFFERED=1"},
	},
	ImageGo: {
		Name: ImageGo, Suite: "bookworm", Variant: "minbase",
		Packages: []string{"golang-go", "gotestsum", "ca-certificates"},
		// No network in a verifier: modules must be vendored, and the toolchain is the
		// image's own. Caches live on the writable /tender tmpfs.
		Env: []string{
			"GOPROXY=off", "GOTOOLCHAIN=local", "GOFLAGS=-mod=vendor", "GONOSUMDB=*", "GOSUMDB=off",
			"CGO_ENABLED=0", "GOCACHE=/tender/cache/go-build", "GOPATH=/tender/go",
			"GOMODCACHE=/tender/go/pkg/mod", "GOTMPDIR=/tmp",
		},
	},
}

// BuiltinRecipe returns the recipe of a built-in image name, with or without ":latest".
func BuiltinRecipe(image string) (Recipe, bool) {
	r, ok := builtins[strings.TrimSuffix(image, ":latest")]
	if !ok {
		return Recipe{}, false
	}
	r.Packages = slices.Clone(r.Packages)
	r.Env = slices.Clone(r.Env)
	return r, true
}

// Digest identifies everything that shapes the image; a change rebuilds it.
func (r Recipe) Digest() string {
	pk := slices.Clone(r.Packages)
	slices.Sort(pk)
	b, _ := json.Marshal(struct {
		Format, Suite, Variant string
		Packages, Changes      []string
	}{RecipeFormat, r.Suite, r.Variant, pk, r.Changes()})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Changes are the image settings, as Dockerfile instructions, applied when the rootfs is
// imported. They are part of the digest.
func (r Recipe) Changes() []string {
	c := []string{
		"USER " + VerifierUser,
		"WORKDIR /workspace",
		"ENV PATH=" + SafePath,
		"ENV HOME=/tender/home",
	}
	for _, e := range r.Env {
		c = append(c, "ENV "+e)
	}
	return append(c, `CMD ["sleep", "infinity"]`)
}

// Ref is the image reference with its tag (":latest" unless Name has one).
func (r Recipe) Ref() string {
	if strings.Contains(r.Name[strings.LastIndex(r.Name, "/")+1:], ":") {
		return r.Name
	}
	return r.Name + ":latest"
}
