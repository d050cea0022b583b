package report

import "testing"

func TestParseShard(t *testing.T) {
	for _, s := range []string{"1/1", "2/3", "3/3", "1000/1000"} {
		sh, err := ParseShard(s)
		if err != nil {
			t.Errorf("ParseShard(%q): %v", s, err)
		}
		if sh.String() != s {
			t.Errorf("ParseShard(%q).String() = %q", s, sh.String())
		}
	}
	for _, s := range []string{"", "0/3", "4/3", "1/0", "-1/3", "a/b", "1", "1/2/3", "1/1001"} {
		if _, err := ParseShard(s); err == nil {
			t.Errorf("ParseShard(%q) accepted", s)
		}
	}
}

// TestShardOfIsPinned: a pair's shard is part of every sharded bundle ever sealed, and merge
// checks it; a change of the hash would refuse to merge shards graded before it.
func TestShardOfIsPinned(t *testing.T) {
	for _, c := range []struct {
		id       string
		n, shard int
	}{{"pair-01", 3, 0}, {"pair-02", 3, 2}, {"a", 3, 1}, {"pair-01", 1000, 530}, {"django__django-11099", 1000, 290}} {
		if got := ShardOf(c.id, c.n); got != c.shard {
			t.Errorf("ShardOf(%q, %d) = %d, want %d", c.id, c.n, got, c.shard)
		}
		if !(Shard{K: c.shard + 1, N: c.n}).Holds(c.id) || (Shard{K: (c.shard+1)%c.n + 1, N: c.n}).Holds(c.id) {
			t.Errorf("Holds disagrees with ShardOf(%q, %d) = %d", c.id, c.n, c.shard)
		}
	}
	if !(Shard{}).Holds("any") || (Shard{}).String() != "" {
		t.Error("the zero Shard is not the whole batch")
	}
}
