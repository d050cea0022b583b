#!/bin/sh
# Records, in each *.txtar here, what GNU patch makes of its file and patch: the -- gnu --
# section is `patch --batch --fuzz=5 -p1` output (less "patching file"), with its exit status,
# and -- result -- the file it leaves. TestFuzzStepAgainstGNUPatch holds Tender's fuzz step to
# them. Recorded with GNU patch 2.7.6 (Debian bookworm); rerun after changing a case.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
for t in "$here"/*.txtar; do
	work=$(mktemp -d)
	awk -v w="$work" '
		/^-- [a-z]+ --$/ { sec = $2; next }
		sec == "file" { print > (w "/f.txt") }
		sec == "patch" { print > (w "/p.diff") }
		sec == "" { print > (w "/comment") }
	' "$t"
	status=0
	out=$(cd "$work" && patch --batch --fuzz=5 -p1 -i p.diff 2>&1) || status=$?
	{
		cat "$work/comment"
		printf -- '-- file --\n'
		awk '/^-- [a-z]+ --$/ { sec = $2; next } sec == "file"' "$t"
		printf -- '-- patch --\n'
		cat "$work/p.diff"
		printf -- '-- gnu --\n'
		printf '%s\n' "$out" | grep -v '^patching file ' || true
		printf 'exit %d\n' "$status"
		printf -- '-- result --\n'
		cat "$work/f.txt"
	} >"$t.new"
	mv "$t.new" "$t"
	rm -rf "$work"
done
