#!/usr/bin/env bash
# Writes the released image into action.yml: runs.image becomes docker://REPOSITORY@sha256:...,
# so a workflow that uses the release commit pulls that image, by digest, instead of building
# the Dockerfile. Only the release commit carries it: the branch keeps `image: Dockerfile`,
# which `uses: ./` builds. The release workflow (.github/workflows/release.yml) runs it; the
# test is internal/cli's TestReleaseActionYML.
#
#   bash .ci/release-action-yml.sh REPOSITORY@sha256:DIGEST [FILE]     (FILE: action.yml)
#
# It refuses a reference that is not a repository pinned by a sha256 digest (a tag would let
# the image change under a release), and a FILE whose runs section does not have exactly one
# `image: Dockerfile` line (already rewritten, or not this Action's metadata).
set -euo pipefail

die() { printf 'release-action-yml: %s\n' "$*" >&2; exit 2; }

[[ $# -ge 1 && $# -le 2 ]] || die "usage: $0 REPOSITORY@sha256:DIGEST [action.yml]"
ref=$1
file=${2:-action.yml}
component='[a-z0-9]+([._-][a-z0-9]+)*'
[[ $ref =~ ^[a-z0-9]+([.-][a-z0-9]+)*(:[0-9]+)?(/$component)+@sha256:[0-9a-f]{64}$ ]] ||
	die "$ref: give the pushed image as REGISTRY/OWNER/NAME@sha256:<64 hex digits> (a digest, not a tag)"
[[ -f $file ]] || die "$file: no such file"

tmp=$(mktemp "$(dirname "$file")/.action.yml.XXXXXX")
trap 'rm -f "$tmp"' EXIT
# Only the line in the top-level runs: section changes; every other byte stays.
awk -v image="docker://$ref" '
	/^[^ #]/ { inruns = ($0 ~ /^runs:[ \t]*$/) }
	inruns && $0 == "  image: Dockerfile" { print "  image: " image; n++; next }
	{ print }
	END { if (n != 1) exit 3 }' "$file" >"$tmp" ||
	die "$file: want exactly one \`  image: Dockerfile\` line under runs: (is it rewritten already?)"
chmod --reference="$file" "$tmp"
mv "$tmp" "$file"
trap - EXIT
printf 'release-action-yml: %s now runs docker://%s\n' "$file" "$ref" >&2
