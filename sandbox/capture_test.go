package sandbox

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var captureCases = []struct {
	name   string
	limit  int64
	chunks []string
	want   Capture
	str    string
}{
	{"empty", 8, nil, Capture{}, ""},
	{"fits", 8, []string{"abc", "de"}, Capture{Head: []byte("abcde"), Total: 5}, "abcde"},
	{"exactly the limit", 8, []string{"abcdefgh"}, Capture{Head: []byte("abcdefgh"), Total: 8}, "abcdefgh"},
	{
		"one over",
		8,
		[]string{"abcdefghi"},
		Capture{Head: []byte("abcd"), Tail: []byte("fghi"), Total: 9, Truncated: true},
		"abcd\n…[1 bytes omitted]…\nfghi",
	},
	{"many small writes wrap the ring", 6, []string{"ab", "cd", "ef", "gh", "ij", "k"},
		Capture{Head: []byte("abc"), Tail: []byte("ijk"), Total: 11, Truncated: true}, "abc\n…[5 bytes omitted]…\nijk"},
	{"one huge write", 4, []string{strings.Repeat("x", 100) + "yz"},
		Capture{Head: []byte("xx"), Tail: []byte("yz"), Total: 102, Truncated: true}, "xx\n…[98 bytes omitted]…\nyz"},
	{"odd limit gives the tail the extra byte", 5, []string{"0123456789"},
		Capture{Head: []byte("01"), Tail: []byte("789"), Total: 10, Truncated: true}, "01\n…[5 bytes omitted]…\n789"},
}

func TestCapture(t *testing.T) {
	for _, tt := range captureCases {
		t.Run(tt.name, func(t *testing.T) {
			w := NewCapWriter(tt.limit)
			for _, c := range tt.chunks {
				if n, err := w.Write([]byte(c)); n != len(c) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			got := w.Capture()
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b []byte) bool { return bytes.Equal(a, b) })); diff != "" {
				t.Errorf("capture (-want +got):\n%s", diff)
			}
			if got.String() != tt.str {
				t.Errorf("String() = %q, want %q", got.String(), tt.str)
			}
		})
	}
}

// FuzzCapture checks the capture against the plain answer: the first and last bytes of the
// concatenated stream, whatever the write sizes.
func FuzzCapture(f *testing.F) {
	for _, tt := range captureCases {
		f.Add(strings.Join(tt.chunks, ""), uint8(tt.limit), uint8(3))
	}
	f.Fuzz(func(t *testing.T, data string, limit, chunk uint8) {
		lim := int64(limit%64) + 2
		step := int(chunk%17) + 1
		w := NewCapWriter(lim)
		for i := 0; i < len(data); i += step {
			w.Write([]byte(data[i:min(i+step, len(data))]))
		}
		c := w.Capture()
		if c.Total != int64(len(data)) {
			t.Fatalf("total %d, want %d", c.Total, len(data))
		}
		if !c.Truncated {
			if string(c.Head) != data || len(c.Tail) != 0 {
				t.Fatalf("untruncated capture %q/%q of %q", c.Head, c.Tail, data)
			}
			return
		}
		h := int(lim / 2)
		if string(c.Head) != data[:h] || string(c.Tail) != data[len(data)-int(lim)+h:] {
			t.Fatalf("limit %d step %d: head %q tail %q of %q", lim, step, c.Head, c.Tail, data)
		}
	})
}
