#!/usr/bin/env bash
# Builds the Action's image from locally imported base images (no image can be pulled here),
# as the release workflow builds it from digest-pinned ones, checks --help and validate in it,
# then runs the consumer path (.ci/action-consumer.sh): the image, run as GitHub runs a
# container action (the workspace mounted at /github/workspace, an engine's socket mounted,
# inputs as INPUT_* variables, no arguments), grades the demo on an engine with no verifier
# image, cold and from its image cache. Workspaces reach verifiers as tar streams, never as
# bind mounts. Every `docker run` here is --network none: none needs a network (the engine is
# reached through its socket), and a CI machine may have no default bridge at all ("could not
# find bridge docker0"). Exits non-zero on any failure.
#
#   bash .ci/action-image.sh             build, --help, validate, and the consumer path
#   TENDER_ACTION_GRADE=0 bash ...       stop after validate
#   IMAGE=NAME bash ...                  the image's tag (default tender-action:local)
#   TENDER_REBUILD_BASES=1 bash ...      rebuild the imported base images
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
SUITE_CODENAME=${SUITE_CODENAME:-bookworm}
BASE_IMAGE=${BASE_IMAGE:-tender-action-base:$SUITE_CODENAME}
GO_IMAGE=${GO_IMAGE:-tender-action-go:local}
IMAGE=${IMAGE:-tender-action:local}
SUITE=${SUITE:-fixtures/demo}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tender-action.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

log() { printf '\n== %s\n' "$*" >&2; }
die() { printf 'action-image: %s\n' "$*" >&2; exit 1; }

have_image() { [[ ${TENDER_REBUILD_BASES:-0} != 1 ]] && docker image inspect "$1" >/dev/null 2>&1; }

# apt_mirror prints the first "deb" URI of the machine's apt sources that carries the suite
# with the main component: one-line sources.list files and deb822 .sources files both count.
apt_mirror() {
	local suite=$1 f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[[ -f $f ]] || continue
		awk -v s="$suite" '$1 == "deb" { i = 2; if ($2 ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
			uri = $i; if ($(i+1) == s) for (j = i+2; j <= NF; j++) if ($j == "main") { print uri; exit } }' "$f"
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[[ -f $f ]] || continue
		awk -v s="$suite" 'function flush() { if (types ~ /(^| )deb( |$)/ && (" " suites " ") ~ (" " s " ") && (" " comps " ") ~ / main /) { split(uris, u, " "); print u[1]; found = 1 }
			types = uris = suites = comps = "" }
			/^[ \t]*$/ { flush(); if (found) exit; next }
			/^#/ { next }
			/^Types:/ { sub(/^Types:[ \t]*/, ""); types = $0 }
			/^URIs:/ { sub(/^URIs:[ \t]*/, ""); uris = $0 }
			/^Suites:/ { sub(/^Suites:[ \t]*/, ""); suites = $0 }
			/^Components:/ { sub(/^Components:[ \t]*/, ""); comps = $0 }
			/^Enabled:[ \t]*no/ { types = "" }
			END { if (!found) flush() }' "$f"
	done | grep -E '^(https?|file)://' | head -n1
}

build_base() {
	have_image "$BASE_IMAGE" && { log "base image $BASE_IMAGE present"; return; }
	command -v debootstrap >/dev/null || die "debootstrap is not installed (apt-get install debootstrap)"
	# DEBIAN_MIRROR (with DEBIAN_KEYRING) names a Debian mirror where the apt sources list none,
	# as on GitHub's Ubuntu runners.
	local mirror=${DEBIAN_MIRROR:-} keyring=()
	[[ -n $mirror ]] || mirror=$(apt_mirror "$SUITE_CODENAME") || true
	[[ -n $mirror ]] || die "no deb entry for $SUITE_CODENAME main in /etc/apt/sources.list{,.d}; set DEBIAN_MIRROR"
	[[ -z ${DEBIAN_KEYRING:-} ]] || keyring=(--keyring="$DEBIAN_KEYRING")
	log "debootstrap $SUITE_CODENAME from $mirror"
	local rootfs=$WORK/rootfs
	debootstrap "${keyring[@]}" --variant=minbase --include=git,ca-certificates,debootstrap "$SUITE_CODENAME" "$rootfs" "$mirror" >"$WORK/debootstrap.log" 2>&1 ||
		{ tail -n 30 "$WORK/debootstrap.log" >&2; die "debootstrap failed"; }
	rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
	tar --numeric-owner -C "$rootfs" -cf - . |
		docker import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' - "$BASE_IMAGE" >/dev/null
	rm -rf "$rootfs"
}

# build_go imports the host's Go toolchain and its module download cache (served to the build as
# a file:// module proxy), so `go build` in the builder stage works without a network.
build_go() {
	have_image "$GO_IMAGE" && { log "builder image $GO_IMAGE present"; return; }
	local goroot modcache
	goroot=$(go env GOROOT)
	modcache=$(go env GOMODCACHE)
	[[ -d $modcache/cache/download ]] || die "no module cache at $modcache/cache/download"
	log "importing Go $(go env GOVERSION) from $goroot and the module cache as $GO_IMAGE"
	mkdir -p "$WORK/empty/tmp"
	chmod 1777 "$WORK/empty/tmp"
	tar --numeric-owner -cf - \
		-C "$goroot/.." --transform "s,^$(basename "$goroot"),usr/local/go," "$(basename "$goroot")" \
		-C "$modcache/cache" --transform 's,^download,goproxy,' download \
		-C "$WORK/empty" tmp |
		docker import \
			--change 'ENV PATH=/usr/local/go/bin:/usr/bin:/bin' \
			--change 'ENV GOPROXY=file:///goproxy' --change 'ENV GOSUMDB=off' \
			--change 'ENV HOME=/tmp' --change 'ENV GOPATH=/tmp/go' --change 'ENV GOCACHE=/tmp/gocache' \
			- "$GO_IMAGE" >/dev/null
}

build_image() {
	log "docker build $IMAGE (GO_IMAGE=$GO_IMAGE BASE_IMAGE=$BASE_IMAGE, no network)"
	docker build --network none --build-arg GO_IMAGE="$GO_IMAGE" --build-arg BASE_IMAGE="$BASE_IMAGE" \
		-t "$IMAGE" . >"$WORK/build.log" 2>&1 || { tail -n 40 "$WORK/build.log" >&2; die "docker build failed"; }
	docker run --rm --network none --entrypoint git "$IMAGE" --version >/dev/null || die "git is missing from the final stage"
}

# workspace copies the suite into a fresh directory that plays GITHUB_WORKSPACE.
workspace() {
	mkdir -p "$WORK/ws/$(dirname "$SUITE")"
	cp -a "$SUITE" "$WORK/ws/$SUITE"
}

build_base
build_go
build_image

log "tender --help in the image"
docker run --rm --network none "$IMAGE" --help >"$WORK/help.txt" || die "tender --help failed"
grep -q '^Usage: tender' "$WORK/help.txt" || die "tender --help printed no usage"

workspace
log "tender validate $SUITE in the image"
docker run --rm --network none -v "$WORK/ws":/github/workspace -w /github/workspace "$IMAGE" validate "$SUITE" || die "validate failed"

if [[ ${TENDER_ACTION_GRADE:-1} == 0 ]]; then
	log "grade skipped (TENDER_ACTION_GRADE=0)"
	exit 0
fi

# The consumer path: the image grades the suite on an engine with no verifier image, builds
# that image itself, then grades again from the image cache (.ci/action-consumer.sh).
IMAGE=$IMAGE SUITE=$SUITE bash .ci/action-consumer.sh
