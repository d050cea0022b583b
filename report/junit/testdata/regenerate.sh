#!/bin/sh
# Regenerates the real reports in this directory from the sample projects beside it.
# pytest-xunit1.xml, pytest-xunit2.xml: python3-pytest 7.2.1 (Debian bookworm).
# pytest-subtests-0.9.xml: the same pytest with python3-pytest-subtests 0.9.0 (Debian bookworm).
# pytest9-subtests*.xml are written by hand (no pytest 9 here); see the comment at their top.
# gotest.jsonl: `go test -json ./...`; gotestsum.xml: gotestsum v1.13.0 --junitfile.
# The reports keep the host name and absolute paths of the machine that made them.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cp -r "$here/pytest-project" "$work/py"
for fam in xunit1 xunit2; do
	(cd "$work/py" && python3 -m pytest -p no:cacheprovider --continue-on-collection-errors \
		-o junit_family=$fam --junitxml="$here/pytest-$fam.xml" tests) || true
done

cp -r "$here/pytest-subtests-project" "$work/sub"
(cd "$work/sub" && /usr/bin/python3 -m pytest -p no:cacheprovider \
	--junitxml="$here/pytest-subtests-0.9.xml" tests) || true

cp -r "$here/go-project" "$work/go"
mv "$work/go/go.mod.txt" "$work/go/go.mod"
(cd "$work/go" && go test -json ./... >"$here/gotest.jsonl") || true
(cd "$work/go" && gotestsum --format standard-quiet --junitfile "$here/gotestsum.xml" -- ./...) || true
