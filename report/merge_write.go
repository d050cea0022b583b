package report

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/tender-grader/tender/report/bundle"
)

// Write copies each shard's per-pair files into out, which must exist and be empty, writes
// the batch outputs of the whole (with swe's SWE-bench part), and seals them with key (nil:
// unsigned) at now. A file
// that no longer has the digest its shard's verified envelope lists is refused (it changed
// after the shard verified), and nothing is overwritten.
func (m *ShardMerge) Write(ctx context.Context, out string, swe SWEBenchOutputs, key ed25519.PrivateKey,
	now time.Time) (*bundle.Manifest, error) {
	copied := map[string]bool{}
	for _, s := range m.shards {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := copyShardFiles(s, out, copied); err != nil {
			return nil, err
		}
	}
	if err := WriteOutputs(out, m.Results, swe); err != nil {
		return nil, err
	}
	man, err := bundle.Seal(out, mergedInputs(m.shards), key, now)
	if err != nil {
		return nil, fmt.Errorf("sealing the merged bundle: %w", err)
	}
	return man, nil
}

// mergedInputs carries the shards' inputs (which must agree), their options without the
// shard, and the digest of every shard's envelope, so the merged statement names its sources.
func mergedInputs(shards []shardPart) bundle.Inputs {
	in := bundle.Inputs{Files: map[string]string{}, Options: map[string]string{}, Images: map[string]string{},
		Tool: shards[0].Manifest.Inputs.Tool}
	for _, s := range shards {
		for k, v := range s.Manifest.Inputs.Files {
			in.Files[k] = v
		}
		for k, v := range s.Manifest.Inputs.Options {
			in.Options[k] = v
		}
		for k, v := range s.Manifest.Inputs.Images {
			in.Images[k] = v
		}
		in.Files["shard/"+strconv.Itoa(s.shard.K)+"/"+bundle.EnvelopeName] = s.Manifest.EnvelopeSHA256
	}
	in.Options["shard"] = ""
	in.Options["merged_shards"] = strconv.Itoa(shards[0].shard.N)
	return in
}

// copyShardFiles copies the per-pair files of s into out, refusing to overwrite anything, and
// the environments' files another shard has not (copied, which checkFiles found equal).
// The files are those s's verified envelope lists, each checked against its digest there.
func copyShardFiles(s shardPart, out string, copied map[string]bool) error {
	for _, f := range s.Manifest.Files {
		if mergedAggregate(f.Name) || copied[f.Name] {
			continue
		}
		copied[f.Name] = true
		src := filepath.Join(s.Dir, filepath.FromSlash(f.Name))
		if err := copyFileNew(src, filepath.Join(out, filepath.FromSlash(f.Name)), f); err != nil {
			return fmt.Errorf("merging %s: %w", s.Dir, err)
		}
	}
	return nil
}

// copyFileNew copies src to the new file dst and checks that what it copied has f's digest.
// It follows no symlink at src and opens nothing but a regular file.
func copyFileNew(src, dst string, f bundle.Subject) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	in, err := os.OpenFile(src, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	if fi, err := in.Stat(); err != nil || !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", src)
	}
	o, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		// PlanMerge gave each file one shard: something else writes into out.
		return fmt.Errorf("%s exists already; merge writes a new bundle into an empty directory", dst)
	}
	if err != nil {
		return err
	}
	got, err := bundle.Digest(io.TeeReader(in, o))
	if err = errors.Join(err, o.Close()); err != nil {
		return err
	}
	if got != f.SHA256 {
		os.Remove(dst) // bytes nobody verified stay out of the merged bundle
		return &bundle.FileError{Path: f.Name, Err: bundle.ErrTampered,
			Detail: fmt.Sprintf("sha256 %s when copied, %s when the shard verified", got, f.SHA256)}
	}
	return nil
}
