package gitsafe

// IsObjectID reports whether s is a full SHA-1 object id as Tender writes and accepts them:
// exactly 40 lowercase hex digits. It is the one rule for base commits, in suites and in
// imported instances alike.
func IsObjectID(s string) bool { return len(s) == 40 && isHex(s) }
