package gitsafe

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// catVerified reads objects through one `cat-file --batch` and checks that
// each one's content hashes to its id. Git checks commits and trees when it
// parses them, but hands out blobs as stored: a forged pack index could map
// a blob id to other content. Every blob gitsafe hands out is checked
// (Materialize checks while it writes).
func (r *Repo) catVerified(ctx context.Context, oids []string, fn func(oid, typ string, body []byte) error) error {
	var in bytes.Buffer
	for _, oid := range oids {
		in.WriteString(oid + "\n")
	}
	_, err := r.git(ctx, gitCall{
		args:  []string{"cat-file", "--batch", "--buffer"},
		stdin: &in,
		consume: func(out io.Reader) error {
			br := bufio.NewReaderSize(out, 1<<20)
			for _, oid := range oids {
				typ, body, err := readVerified(br, oid)
				if err != nil {
					return err
				}
				if err := fn(oid, typ, body); err != nil {
					return err
				}
			}
			return nil
		},
	})
	return err
}

func readVerified(br *bufio.Reader, oid string) (string, []byte, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return "", nil, fmt.Errorf("gitsafe: cat-file output ended before object %s: %w", oid, err)
	}
	f := strings.Fields(line)
	if len(f) != 3 || f[0] != oid {
		return "", nil, fmt.Errorf("gitsafe: cat-file answered %q for object %s", strings.TrimSpace(line), oid)
	}
	size, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil || size < 0 || size > MaxOutputBytes {
		return "", nil, fmt.Errorf("%w: object %s of %s bytes", ErrTooLarge, oid, f[2])
	}
	body := make([]byte, size+1)
	if _, err := io.ReadFull(br, body); err != nil {
		return "", nil, fmt.Errorf("gitsafe: object %s is truncated: %w", oid, err)
	}
	body = body[:size]
	h := sha1.New()
	fmt.Fprintf(h, "%s %d\x00", f[1], size)
	h.Write(body)
	if got := hex.EncodeToString(h.Sum(nil)); got != oid {
		return "", nil, unsafeRepo(
			oid,
			fmt.Sprintf(
				"object content hashes to %s: the repository's pack index or object store is forged or corrupt",
				got,
			),
		)
	}
	return f[1], body, nil
}
