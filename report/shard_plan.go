package report

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// ShardPlan is the record of shards balanced by cost (`grade --shard k/n --durations BUNDLE`),
// kept in every shard's results so that merge can compute the assignment again and check
// each pair against it. The assignment is a function of the suite's pair ids, N and the
// durations alone, so every shard of a matrix computes the same one.
//
// The algorithm: a pair with no recorded duration goes to its hash shard (ShardOf), costed at
// the mean recorded duration; then the pairs with one, longest first (ties by id), each go to
// the shard with the least cost so far (ties: fewer pairs, then the lower shard). This is the
// longest-processing-time rule: the slowest shard is within 4/3 of the best possible, and
// close to the mean when no one pair dominates.
type ShardPlan struct {
	// Durations is the recorded wall time of each pair of the suite that had one, in ms.
	Durations map[string]int64 `json:"durations_ms"`
	// Pairs is how many pairs the plan placed: every pair of the suite.
	Pairs int `json:"pairs"`
	// Digest covers N, the sorted pair ids and the durations: shards with the same digest
	// computed the same assignment.
	Digest string `json:"digest"`
	// Source is the sha256 of the results.json the durations were read from.
	Source string `json:"source,omitempty"`

	n      int
	assign map[string]int // pair id -> 0-based shard
	cost   []int64        // estimated ms per shard
}

// Balance returns shard s of N balanced over the pairs ids by their durations (pair id -> ms).
// s must be a shard of N > 0; ids are every pair of the suite.
func (s Shard) Balance(ids []string, durations map[string]int64, source string) Shard {
	s.plan = planShards(ids, s.N, durations)
	s.plan.Source = source
	return s
}

func planShards(ids []string, n int, durations map[string]int64) *ShardPlan {
	ids = slices.Sorted(slices.Values(ids))
	ids = slices.Compact(ids)
	p := &ShardPlan{
		Durations: map[string]int64{},
		Pairs:     len(ids),
		n:         n,
		assign:    map[string]int{},
		cost:      make([]int64, n),
	}
	var known []string
	var sum int64
	for _, id := range ids {
		if d, ok := durations[id]; ok && d >= 0 {
			p.Durations[id] = d
			known = append(known, id)
			sum += d
		}
	}
	count := make([]int, n)
	mean := int64(0)
	if len(known) > 0 {
		mean = sum / int64(len(known))
	}
	for _, id := range ids {
		if _, ok := p.Durations[id]; !ok {
			k := ShardOf(id, n)
			p.assign[id], p.cost[k], count[k] = k, p.cost[k]+mean, count[k]+1
		}
	}
	slices.SortStableFunc(known, func(a, b string) int { return cmp.Compare(p.Durations[b], p.Durations[a]) })
	for _, id := range known {
		k := 0
		for j := 1; j < n; j++ {
			if p.cost[j] < p.cost[k] || p.cost[j] == p.cost[k] && count[j] < count[k] {
				k = j
			}
		}
		p.assign[id], p.cost[k], count[k] = k, p.cost[k]+p.Durations[id], count[k]+1
	}
	p.Digest = p.digest(ids)
	return p
}

// digest is sha256 over "n\n", then "id\tms\n" for each pair in id order (ms empty without
// a recorded duration).
func (p *ShardPlan) digest(sortedIDs []string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%d\n", p.n)
	for _, id := range sortedIDs {
		ms := ""
		if d, ok := p.Durations[id]; ok {
			ms = strconv.FormatInt(d, 10)
		}
		fmt.Fprintf(h, "%s\t%s\n", id, ms)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (p *ShardPlan) shardOf(id string) (int, bool) {
	if p == nil {
		return 0, false
	}
	k, ok := p.assign[id]
	return k, ok
}

// Cost is the estimated cost of each shard, in ms: its pairs' recorded durations, and the
// mean for each pair without one.
func (p *ShardPlan) Cost() []int64 { return slices.Clone(p.cost) }

// Known is how many pairs had a recorded duration.
func (p *ShardPlan) Known() int { return len(p.Durations) }

// replan computes the plan a recorded one stands for, over the pairs ids of n shards, and
// fails unless it is the same plan (the same digest): the shards were balanced over the same
// pairs with the same durations.
func (p *ShardPlan) replan(ids []string, n int) (*ShardPlan, error) {
	again := planShards(ids, n, p.Durations)
	again.Source = p.Source
	if again.Pairs != p.Pairs {
		var lost []string
		for id := range p.Durations {
			if _, ok := again.Durations[id]; !ok {
				lost = append(lost, id)
			}
		}
		slices.Sort(lost)
		named := ""
		if len(lost) > 0 {
			named = " (missing: " + strings.Join(lost[:min(len(lost), 5)], ", ") + ")"
		}
		return nil, fmt.Errorf("its shards were balanced over %d pair(s), but together they hold %d%s; "+
			"grade the shard that lost pairs again", p.Pairs, again.Pairs, named)
	}
	if again.Digest != p.Digest {
		return nil, errors.New("its digest is not that of its pairs and durations; the results were edited, " +
			"or the shards graded different suites")
	}
	return again, nil
}

// ReadDurations reads the recorded duration of each pair of an earlier bundle's results.json
// (dir, or the file itself), for Balance, and the sha256 of the file. An error verdict's
// duration is left out: an infrastructure failure says nothing of what the pair costs.
func ReadDurations(path string) (map[string]int64, string, error) {
	dir := path
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		if filepath.Base(path) != ResultsJSON {
			return nil, "", fmt.Errorf(
				"%w: %s is not a bundle's %s; give the bundle directory",
				ErrResults,
				path,
				ResultsJSON,
			)
		}
		dir = filepath.Dir(path)
	}
	res, err := ReadResultsJSON(dir)
	if err != nil {
		return nil, "", err
	}
	b, err := os.ReadFile(filepath.Join(dir, ResultsJSON))
	if err != nil {
		return nil, "", fmt.Errorf("%w: %w", ErrResults, err)
	}
	sum := sha256.Sum256(b)
	out := map[string]int64{}
	for _, r := range res.Pairs {
		if r.Verdict != Error && r.DurationMillis >= 0 {
			out[r.ID] = r.DurationMillis
		}
	}
	return out, hex.EncodeToString(sum[:]), nil
}
