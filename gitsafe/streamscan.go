package gitsafe

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// safeFeatures are the fast-import features a vendored stream may ask for.
// The others (import-marks, import-marks-if-exists, export-marks,
// rewrite-submodules-from/to) read or write files on the host, and
// "option" lines can pass command-line options; both are refused before
// fast-import runs (which also refuses the marks features itself).
var safeFeatures = map[string]bool{
	"date-format": true, "force": true, "done": true, "notes": true,
	"ls": true, "cat-blob": true, "get-mark": true,
}

// scanFastExport reads a fast-export stream's command lines, skipping data
// payloads, and refuses any feature or option outside safeFeatures.
func scanFastExport(path string, rd io.Reader) error {
	br := bufio.NewReaderSize(rd, 64<<10)
	lineNo := 0
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return unsafeRepo(path, fmt.Sprintf("fast-export stream: command line %d is longer than 64 KiB", lineNo+1))
		}
		if len(line) == 0 && err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		lineNo++
		cmd := strings.TrimSuffix(string(line), "\n")
		if err := checkStreamCommand(path, lineNo, cmd); err != nil {
			return err
		}
		if strings.HasPrefix(cmd, "data ") {
			if err := skipData(br, cmd); err != nil {
				return unsafeRepo(path, fmt.Sprintf("fast-export stream line %d: %v", lineNo, err))
			}
		}
	}
}

func checkStreamCommand(path string, lineNo int, cmd string) error {
	if rest, ok := strings.CutPrefix(cmd, "feature "); ok {
		name, _, _ := strings.Cut(rest, "=")
		if !safeFeatures[name] {
			return unsafeRepo(
				path,
				fmt.Sprintf("fast-export stream line %d: feature %q reads or writes host files", lineNo, name),
			)
		}
	}
	if strings.HasPrefix(cmd, "option ") {
		return unsafeRepo(
			path,
			fmt.Sprintf("fast-export stream line %d: %q: in-stream options are not accepted", lineNo, cmd),
		)
	}
	return nil
}

// skipData skips the payload of "data <n>" or "data <<delim".
func skipData(br *bufio.Reader, cmd string) error {
	arg := strings.TrimPrefix(cmd, "data ")
	if delim, ok := strings.CutPrefix(arg, "<<"); ok {
		return skipDelimited(br, delim)
	}
	n, err := strconv.ParseInt(arg, 10, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("bad data length %q", arg)
	}
	if _, err := io.CopyN(io.Discard, br, n); err != nil {
		return fmt.Errorf("data ends early: %w", err)
	}
	if b, err := br.Peek(1); err == nil && b[0] == '\n' {
		_, _ = br.ReadByte()
	}
	return nil
}

func skipDelimited(br *bufio.Reader, delim string) error {
	end := []byte(delim + "\n")
	for {
		line, err := br.ReadBytes('\n')
		if bytes.Equal(line, end) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("data <<%s is not terminated", delim)
		}
	}
}
