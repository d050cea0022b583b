package githubtest

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// recorder captures what the fake reports instead of failing the outer test.
type recorder struct {
	testing.TB
	errs     []string
	cleanups []func()
}

func (r *recorder) Helper()                        {}
func (r *recorder) Cleanup(f func())               { r.cleanups = append(r.cleanups, f) }
func (r *recorder) Errorf(format string, a ...any) { r.errs = append(r.errs, format) }

func TestFakeReportsUnexpectedAndUncalled(t *testing.T) {
	rec := &recorder{TB: t}
	f := New(rec)
	f.On("GET", "/expected", 1, JSON(200, map[string]any{}))
	f.On("POST", "/never", 1, JSON(201, map[string]any{}))
	resp, err := http.Get(f.URL + "/surprise")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTeapot {
		t.Errorf("unexpected request answered %d", resp.StatusCode)
	}
	resp, err = http.Get(f.URL + "/expected")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, c := range rec.cleanups {
		c()
	}
	want := []string{"fake GitHub: unexpected request %s %s", "fake GitHub: stub %s %s called %d times, want %d"}
	if d := cmp.Diff(want, rec.errs); d != "" {
		t.Errorf("reports (-want +got):\n%s", d)
	}
	if got := len(f.Requests()); got != 2 || !strings.HasPrefix(f.URL, "http://127.0.0.1:") {
		t.Errorf("%d requests recorded at %s", got, f.URL)
	}
}
