package report

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const recordJSON = `{"allow":["127.0.0.1:8080"],"requests":[{"method":"GET","host":"127.0.0.1:8080",` +
	`"path":"/simple/tinypkg/","status":200,"bytes":12,"sha256":"a213"}]}`

// TestWriteBuildNetwork: an environment's build record is written indented under its own
// directory; a name that cannot be a directory, or a record that is not JSON, is refused.
func TestWriteBuildNetwork(t *testing.T) {
	dir := t.TempDir()
	if err := WriteBuildNetwork(dir, "app", []byte(recordJSON)); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "environments", "app", "build-network.json"))
	if err != nil || !strings.Contains(string(b), "\n  \"requests\": [\n") {
		t.Fatalf("the record as written: %q, %v", b, err)
	}
	if err := WriteBuildNetwork(dir, "../x", []byte(recordJSON)); err == nil {
		t.Error("an environment named ../x was written")
	}
	if err := WriteBuildNetwork(dir, "app", []byte("{")); err == nil {
		t.Error("a record that is not JSON was written")
	}
}

// TestResumeRewritesBuildRecords: resuming a run drops the environments directory (the run
// writes it again when it finishes) instead of refusing it as a foreign file.
func TestResumeRewritesBuildRecords(t *testing.T) {
	dir := t.TempDir()
	if err := WriteBuildNetwork(dir, "app", []byte(recordJSON)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := PrepareResume(dir, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, EnvironmentsDir)); !os.IsNotExist(err) {
		t.Errorf("the environments directory survived a resume: %v", err)
	}
}

// TestMergeBuildRecords: shards graded with the same images hold the same build record, and
// the merged bundle holds it once; shards whose records differ are refused.
func TestMergeBuildRecords(t *testing.T) {
	whole := fixtureResults()
	shards := func(records ...string) []ShardBundle {
		var out []ShardBundle
		for i, s := range shardsOf(t, whole, len(records)) {
			extra := map[string]string{BuildNetworkJSON("app"): records[i]}
			out = append(out, openShard(t, writeShardDir(t, s.Results, extra)))
		}
		return out
	}
	plan, err := PlanMerge(shards(recordJSON, recordJSON))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if _, err := plan.Write(context.Background(), out, SWEBenchOutputs{}, nil, clock); err != nil {
		t.Fatal(err)
	}
	if got := treeOf(t, out)[BuildNetworkJSON("app")]; got != recordJSON {
		t.Errorf("merged record %q, want %q", got, recordJSON)
	}
	_, err = PlanMerge(shards(recordJSON, strings.Replace(recordJSON, "a213", "b999", 1)))
	if err == nil || !strings.Contains(err.Error(), "hold different environments/app/build-network.json") {
		t.Errorf("shards with different records: %v; want them refused, naming the file", err)
	}
}
