package calc

import "testing"

func TestAdd(t *testing.T) {
	if Add(1, 2) != 3 {
		t.Fatal("bad")
	}
}

func TestAddWrong(t *testing.T) {
	if Add(1, 2) != 4 {
		t.Errorf("Add(1, 2) = %d, want 4 <&>", Add(1, 2))
	}
}

func TestSkipped(t *testing.T) {
	t.Skip("not on this platform")
}

func TestTable(t *testing.T) {
	cases := []struct {
		name    string
		a, b, w int
	}{{"one plus one", 1, 1, 2}, {"two plus three", 2, 3, 5}, {"wrong", 1, 1, 3}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Add(c.a, c.b); got != c.w {
				t.Errorf("got %d want %d", got, c.w)
			}
		})
	}
}

func TestNested(t *testing.T) {
	t.Run("outer", func(t *testing.T) {
		t.Run("inner", func(t *testing.T) {})
		t.Run("skip", func(t *testing.T) { t.Skip("later") })
	})
}

func TestParallel(t *testing.T) {
	for _, n := range []string{"a", "b"} {
		t.Run(n, func(t *testing.T) {
			t.Parallel()
		})
	}
}
