package gitsafe

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// The benchmarks compare gitsafe with the plain tools it replaces, in the
// same process and on the same data, and report medians and their ratio:
//
//	go test -run '^$' -bench . -benchtime 7x ./gitsafe/
//
// The repositories are generated once per run under a temporary directory
// with git fast-import; nothing large is committed.

const (
	benchFiles     = 5000
	benchFileSize  = 10 << 10 // 5,000 x 10 KiB = ~50 MB
	benchCommits   = 2000
	benchPerCommit = 48 // 2,000 commits x (48 blobs + 3 trees + 1 commit) = ~104k objects
)

var benchData struct {
	once    sync.Once
	root    string
	tree    string // 5,000-file repository
	objects string // ~100k-object repository (a working clone), packed
	loose   string // the same objects, loose
	err     error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if benchData.root != "" {
		os.RemoveAll(benchData.root)
	}
	os.Exit(code)
}

func benchRepos(b *testing.B) {
	benchData.once.Do(func() {
		dir, err := os.MkdirTemp("", "gitsafe-bench-")
		if err != nil {
			benchData.err = err
			return
		}
		benchData.root = dir
		benchData.tree = filepath.Join(dir, "tree")
		benchData.objects = filepath.Join(dir, "objects")
		benchData.loose = filepath.Join(dir, "loose")
		if benchData.err = fastImport(benchData.tree, treeStream); benchData.err != nil {
			return
		}
		if benchData.err = fastImport(benchData.objects, historyStream); benchData.err != nil {
			return
		}
		benchData.err = unpackInto(benchData.objects, benchData.loose)
	})
	if benchData.err != nil {
		b.Fatal(benchData.err)
	}
}

// fastImport creates a working clone (with an empty working tree) at dir
// from a generated stream.
func fastImport(dir string, gen func(w *bufio.Writer)) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if _, err := tgitErr(dir, nil, "init", "-q", "-b", "main", "--template=", "."); err != nil {
		return err
	}
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir = dir
	cmd.Env = fixtureEnv()
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	w := bufio.NewWriterSize(in, 1<<20)
	gen(w)
	if err := w.Flush(); err != nil {
		return err
	}
	in.Close()
	return cmd.Wait()
}

// unpackInto makes a copy of the working clone src whose objects are all
// loose (one file per object).
func unpackInto(src, dst string) error {
	if err := exec.Command("cp", "-a", src, dst).Run(); err != nil {
		return err
	}
	packs, err := filepath.Glob(filepath.Join(dst, ".git", "objects", "pack", "*.pack"))
	if err != nil || len(packs) != 1 {
		return fmt.Errorf("want one pack, got %v (%v)", packs, err)
	}
	moved := filepath.Join(filepath.Dir(dst), "loose.pack")
	if err := os.Rename(packs[0], moved); err != nil {
		return err
	}
	idx := strings.TrimSuffix(packs[0], ".pack") + ".idx"
	if err := os.Remove(idx); err != nil {
		return err
	}
	pack, err := os.ReadFile(moved)
	if err != nil {
		return err
	}
	_, err = tgitErr(dst, pack, "unpack-objects", "-q")
	return err
}

func treeStream(w *bufio.Writer) {
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, benchFileSize)
	fmt.Fprintf(w, "commit refs/heads/main\ncommitter Bench <b@example.invalid> 1700000000 +0000\ndata 5\nbench\n")
	for i := 0; i < benchFiles; i++ {
		for j := range buf {
			buf[j] = "abcdefghijklmnopqrstuvwxyz0123456789 \n"[rng.IntN(38)]
		}
		fmt.Fprintf(w, "M 100644 inline pkg%02d/mod%d/file%04d.py\ndata %d\n", i%50, (i/50)%10, i, len(buf))
		w.Write(buf)
		w.WriteString("\n")
	}
}

func historyStream(w *bufio.Writer) {
	for c := 0; c < benchCommits; c++ {
		fmt.Fprintf(
			w,
			"commit refs/heads/main\ncommitter Bench <b@example.invalid> %d +0000\ndata 7\ncommit\n",
			1700000000+c,
		)
		for j := 0; j < benchPerCommit; j++ {
			content := fmt.Sprintf("commit %d file %d\n", c, j)
			fmt.Fprintf(w, "M 100644 inline d%02d/c%04d/f%02d.txt\ndata %d\n%s\n", c/100, c, j, len(content), content)
		}
	}
}

// BenchmarkMaterialize: Materialize against `git archive | tar -x` of the
// same commit from the same private copy. Target: at most 1.2x.
func BenchmarkMaterialize(b *testing.B) {
	benchRepos(b)
	ctx := context.Background()
	r, err := Snapshot(ctx, Source{Kind: SourceClone, Path: benchData.tree}, "")
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	head, err := r.ResolveHEAD(ctx)
	if err != nil {
		b.Fatal(err)
	}
	var ours, base []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		base = append(base, timeIt(b, func(dir string) error { return archiveTar(ctx, r, head, dir) }))
		ours = append(ours, timeIt(b, func(dir string) error {
			_, err := r.Materialize(ctx, head, dir)
			return err
		}))
	}
	report(b, "materialize", ours, "archive|tar", base)
}

// BenchmarkSnapshot: Snapshot of a ~100k-object working clone against
// `cp -a` of its .git, with the objects in one pack and all loose.
func BenchmarkSnapshot(b *testing.B) {
	benchRepos(b)
	for _, c := range []struct{ name, repo string }{{"packed", benchData.objects}, {"loose", benchData.loose}} {
		b.Run(c.name, func(b *testing.B) {
			out, _ := tgitErr(c.repo, nil, "count-objects", "-v")
			b.Logf("%s repository:\n%s", c.name, out)
			benchSnapshot(b, c.repo)
		})
	}
}

func benchSnapshot(b *testing.B, repo string) {
	ctx := context.Background()
	var ours, base []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		base = append(base, timeIt(b, func(dir string) error {
			return exec.Command("cp", "-a", filepath.Join(repo, ".git"), dir).Run()
		}))
		ours = append(ours, timeIt(b, func(dir string) error {
			r, err := Snapshot(ctx, Source{Kind: SourceClone, Path: repo}, dir)
			if err == nil {
				_, err = r.ResolveHEAD(ctx)
			}
			return err
		}))
	}
	report(b, "snapshot", ours, "cp -a .git", base)
}

// timeIt runs f with a fresh, absent target directory and removes it
// afterwards, outside the measured time.
func timeIt(b *testing.B, f func(dir string) error) time.Duration {
	parent, err := os.MkdirTemp("", "gitsafe-bench-run-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(parent)
	dir := filepath.Join(parent, "out")
	start := time.Now()
	if err := f(dir); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

func archiveTar(ctx context.Context, r *Repo, commit, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	bin, _ := gitPath()
	archive := exec.CommandContext(
		ctx,
		bin,
		append(gitArgs(gitCall{gitDir: r.GitDir()}), "archive", "--format=tar", commit)...)
	archive.Env = gitEnv(gitCall{gitDir: r.GitDir()})
	archive.Dir = r.root
	tar := exec.CommandContext(ctx, "tar", "-x", "-C", dir)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		return err
	}
	tar.Stdin = pipe
	if err := archive.Start(); err != nil {
		return err
	}
	if err := tar.Run(); err != nil {
		return err
	}
	return archive.Wait()
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func report(b *testing.B, oursName string, ours []time.Duration, baseName string, base []time.Duration) {
	mo, mb := median(ours), median(base)
	ratio := float64(mo) / float64(mb)
	b.ReportMetric(float64(mo.Microseconds())/1000, oursName+"-median-ms")
	b.ReportMetric(float64(mb.Microseconds())/1000, "baseline-median-ms")
	b.ReportMetric(ratio, "ratio")
	var sb strings.Builder
	fmt.Fprintf(&sb, "\n%-14s %5s %12s\n", "", "runs", "median")
	fmt.Fprintf(&sb, "%-14s %5d %12v\n", oursName, len(ours), mo.Round(time.Millisecond))
	fmt.Fprintf(&sb, "%-14s %5d %12v\n", baseName, len(base), mb.Round(time.Millisecond))
	fmt.Fprintf(&sb, "%-14s %18.2fx\n", "ratio", ratio)
	b.Log(sb.String())
}
