package gitsafe

import "fmt"

// SourceKind says how a repository is vendored.
type SourceKind int

const (
	// SourceClone is a local clone (a working tree with a .git directory, or
	// a bare repository), mapped by the operator.
	SourceClone SourceKind = iota
	// SourceBundle is a file written by `git bundle create`.
	SourceBundle
	// SourceFastExport is a file written by `git fast-export`.
	SourceFastExport
)

func (k SourceKind) String() string {
	switch k {
	case SourceClone:
		return "clone"
	case SourceBundle:
		return "bundle"
	case SourceFastExport:
		return "fast-export"
	}
	return fmt.Sprintf("SourceKind(%d)", int(k))
}

// Source names a vendored repository.
type Source struct {
	Kind SourceKind
	Path string
}
