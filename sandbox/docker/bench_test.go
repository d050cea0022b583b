package docker

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/tender-grader/tender/sandbox"
)

// BenchmarkCheckCycle measures the whole per-check cycle through the Engine API (create,
// start, stream a 1,000-file workspace in, run `true`, collect, remove) against
// `docker run --rm IMAGE true` through the CLI, alternating in the same process. It reports
// both medians and their ratio (api/cli; under 1 means the API cycle is faster).
func BenchmarkCheckCycle(b *testing.B) {
	files := map[string]string{}
	for i := range 1000 {
		files[fmt.Sprintf("pkg%02d/mod%03d.py", i%20, i)] = fmt.Sprintf("VALUE = %d\n", i)
	}
	spec := testSpec(b, "true")
	spec.Workspace = writeFiles(b, files)
	ctx := context.Background()
	var api, cli []time.Duration
	for b.Loop() {
		t0 := time.Now()
		res, err := engine.Run(ctx, spec)
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("Run: %v %+v", err, res)
		}
		api = append(api, time.Since(t0))
		t1 := time.Now()
		if out, err := exec.Command("docker", "run", "--rm", sandbox.ImagePytest, "true").CombinedOutput(); err != nil {
			b.Fatalf("docker run: %v: %s", err, out)
		}
		cli = append(cli, time.Since(t1))
	}
	ma, mc := median(api), median(cli)
	b.ReportMetric(float64(ma.Milliseconds()), "api-ms")
	b.ReportMetric(float64(mc.Milliseconds()), "cli-ms")
	b.ReportMetric(float64(ma)/float64(mc), "api/cli")
}

// BenchmarkEnsureImageCached is the cost of EnsureImage when the image is current.
func BenchmarkEnsureImageCached(b *testing.B) {
	for b.Loop() {
		if _, err := engine.EnsureImage(context.Background(), sandbox.ImagePytest, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkImageBuildCold builds the pytest recipe from nothing under another name, then
// removes that image. It runs debootstrap against the machine's mirror: run it with
// -benchtime=1x.
func BenchmarkImageBuildCold(b *testing.B) {
	r, _ := sandbox.BuiltinRecipe(sandbox.ImagePytest)
	r.Name = "tender-verifier/bench-cold"
	ctx := context.Background()
	for b.Loop() {
		if _, err := engine.BuildImage(ctx, r, nil); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if _, err := engine.cli.ImageRemove(ctx, r.Ref(), imageRemoveOptions()); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

func imageRemoveOptions() client.ImageRemoveOptions {
	return client.ImageRemoveOptions{Force: true, PruneChildren: true}
}
