#!/usr/bin/env bash
# The consumer path, run as a runner runs a container action: the Action's image (IMAGE, built
# by .ci/action-image.sh) grades a consumer's suite, a copy of fixtures/demo and nothing else in
# the workspace, on an engine with NO verifier image. That engine is a second dockerd started
# here (its own socket, data root and containerd, no bridge), so the host's shared verifier
# images stay untouched and unseen. The Action must build the verifier image itself, in a
# helper container of its own image, and grade with every expect met; then, on a fresh
# workspace with the image gone from the engine and the image cache restored as actions/cache
# would restore it, grade again with the image loaded from the cache, not built.
#
# Every `docker run` is --network none; only the build helper the Action starts uses the host's
# network, to reach the Debian mirror. Exits non-zero on any failure.
#
#   IMAGE=tender-action:local bash .ci/action-consumer.sh
set -euo pipefail

cd "$(dirname "$0")/.."
IMAGE=${IMAGE:-tender-action:local}
SUITE=${SUITE:-fixtures/demo}
RUN=$(mktemp -d "${TMPDIR:-/tmp}/tender-consumer.XXXXXX")
ENGINE_DIR="" ENGINE_PID=""

log() { printf '\n== %s\n' "$*" >&2; }
die() { printf 'action-consumer: %s\n' "$*" >&2; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

stop_engine() {
	[[ -n $ENGINE_PID ]] || return 0
	kill -TERM "$ENGINE_PID" 2>/dev/null || true
	for _ in $(seq 600); do kill -0 "$ENGINE_PID" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$ENGINE_PID" 2>/dev/null || true
	wait "$ENGINE_PID" 2>/dev/null || true
	ENGINE_PID=""
	# dockerd bind-mounts its data root onto itself, and its network namespace file.
	local m
	for m in $(awk -v d="$ENGINE_DIR/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r); do
		umount -l "$m" 2>/dev/null || true
	done
}
cleanup() {
	stop_engine
	rm -rf "$RUN" || true
	[[ -z $ENGINE_DIR ]] || rm -rf "$ENGINE_DIR" || true
}
trap cleanup EXIT

# start_engine starts the second dockerd and sets E (docker -H ...) and SOCK.
start_engine() {
	ENGINE_DIR=$(mktemp -d /tmp/tender-engine.XXXXXX)
	SOCK=$ENGINE_DIR/sock
	echo '{}' >"$ENGINE_DIR/daemon.json"
	dockerd --config-file "$ENGINE_DIR/daemon.json" --data-root "$ENGINE_DIR/data" --exec-root "$ENGINE_DIR/exec" \
		--pidfile "$ENGINE_DIR/pid" -H "unix://$SOCK" --bridge=none --iptables=false --ip-masq=false \
		>"$ENGINE_DIR/log" 2>&1 &
	ENGINE_PID=$!
	E=(docker -H "unix://$SOCK")
	for _ in $(seq 1200); do
		"${E[@]}" version >/dev/null 2>&1 && return
		kill -0 "$ENGINE_PID" 2>/dev/null || { tail -n 20 "$ENGINE_DIR/log" >&2; die "the second dockerd exited"; }
		sleep 0.1
	done
	die "the second dockerd did not answer within 2 minutes"
}

# workspace makes a runner's directories for one job: the workspace holds the suite alone.
workspace() {
	local job=$RUN/$1
	mkdir -p "$job/ws/suite" "$job/home" "$job/workflow" "$job/file_commands"
	cp -a "$SUITE/." "$job/ws/suite/"
	echo '{}' >"$job/workflow/event.json"
	: >"$job/file_commands/set_output"
	: >"$job/file_commands/step_summary"
}

# step runs the Action's image as the runner runs a container action step: the workspace, home,
# workflow and file-command directories mounted, the engine's socket at /var/run/docker.sock,
# inputs as INPUT_* variables, no arguments.
step() {
	local job=$RUN/$1
	shift
	"${E[@]}" run --rm --network none --workdir /github/workspace \
		-v "$SOCK":/var/run/docker.sock \
		-v "$job/ws":/github/workspace -v "$job/home":/github/home -v "$job/workflow":/github/workflow \
		-v "$job/file_commands":/github/file_commands \
		-e HOME=/github/home -e GITHUB_ACTIONS=true -e CI=true -e GITHUB_WORKSPACE=/github/workspace \
		-e GITHUB_EVENT_NAME=workflow_dispatch -e GITHUB_EVENT_PATH=/github/workflow/event.json \
		-e GITHUB_OUTPUT=/github/file_commands/set_output -e GITHUB_STEP_SUMMARY=/github/file_commands/step_summary \
		-e GITHUB_REPOSITORY=consumer/project -e GITHUB_SHA=0123456789abcdef0123456789abcdef01234567 \
		-e GITHUB_RUN_ID=1 "$@" "$IMAGE"
}

output() { sed -n "/^$2<</{n;p;q}" "$RUN/$1/file_commands/set_output"; }

# check_bundle: every expect met, every check isolated in docker and run in image $2.
check_bundle() {
	python3 - "$RUN/$1/ws/tender-out/results.json" "$2" <<'PY' || die "results check failed"
import json, sys
r = json.load(open(sys.argv[1]))
image = sys.argv[2]
checks = [c for p in r["pairs"] for c in p.get("checks", [])]
bad = [p["id"] for p in r["pairs"] for c in p.get("checks", []) if c["backend"] != "docker" or not c["isolated"]]
ran = {c["image_id"] for c in checks if c.get("image_id")}
other = sorted(ran - {image})
missed = [p["id"] for p in r["pairs"] if p.get("expect_met") is not True]
print("pairs:", len(r["pairs"]), "counts:", r["counts"], "checks:", len(checks), "expect met: all" if not missed else "")
if not ran: sys.exit("no check ran in a verifier")
if bad: sys.exit("checks not isolated in docker: %s" % bad)
if other: sys.exit("checks ran in other images: %s (want %s)" % (other, image))
if missed: sys.exit("expectations not met: %s" % missed)
PY
	go run . verify "$RUN/$1/ws/tender-out" >&2 || die "the bundle of $1 does not verify"
}

[[ -f $SUITE/tender.yaml ]] || die "no suite at $SUITE"
docker image inspect "$IMAGE" >/dev/null 2>&1 || die "no image $IMAGE; build it with .ci/action-image.sh"
total=$(now)

log "a second engine with no image at all (its own dockerd, data root and socket)"
start_engine
t=$(now)
docker save "$IMAGE" | "${E[@]}" load -q >/dev/null || die "loading $IMAGE into the second engine failed"
log "loaded $IMAGE into it in $(since "$t") s"
action_id=$("${E[@]}" image inspect --format '{{.Id}}' "$IMAGE")
if "${E[@]}" images --format '{{.Repository}}' | grep -q '^tender-verifier/'; then die "the second engine has a verifier image"; fi
recipe=$("${E[@]}" run --rm --network none "$IMAGE" image digest --image tender-verifier/pytest)
printf 'Action image %s: %s (what `docker build` made; a registry digest exists only once it is pushed)\n' \
	"$IMAGE" "$action_id" >&2

log "cold: one grade step, image-cache .tender-images, no verifier image on the engine"
workspace cold
t=$(now)
step cold -e INPUT_COMMAND=grade -e INPUT_SUITE=suite -e INPUT_OUT=tender-out -e INPUT_FAIL-ON=error \
	-e INPUT_IMAGE-CACHE=.tender-images >"$RUN/cold.out" 2>"$RUN/cold.err" ||
	{ tail -n 40 "$RUN/cold.err" >&2; die "the cold grade failed"; }
cold_time=$(since "$t")
grep -q 'debootstrap in helper container' "$RUN/cold.err" || die "the cold grade built no image in a helper"
grep -E '^image .*(helper container|streamed|built|saved)' "$RUN/cold.err" >&2 || true
verifier_id=$("${E[@]}" image inspect --format '{{.Id}}' tender-verifier/pytest) ||
	die "no tender-verifier/pytest on the second engine after the cold grade"
label=$("${E[@]}" image inspect --format '{{index .Config.Labels "tender.recipe.digest"}}' tender-verifier/pytest)
[[ $label == "$recipe" ]] || die "the verifier image's recipe label is $label, want $recipe"
if [[ -n $("${E[@]}" ps -aq --filter label=tender.run) ]]; then die "a Tender container is left on the engine"; fi
check_bundle cold "$verifier_id"
key=$(output cold image-key)
[[ $key == tender-images-* ]] || die "image-key output is $key"
archive=.tender-images/tender-verifier_pytest_latest.$recipe.tar
[[ -f $RUN/cold/ws/$archive ]] || die "the image cache holds no $archive: $(ls "$RUN/cold/ws/.tender-images")"
printf 'verifier image tender-verifier/pytest built in the Action container: %s, recipe %s\n' "$verifier_id" "$recipe" >&2
printf 'outputs: total %s, resolved %s, image-key %s; cache %s (%s MiB)\n' "$(output cold total)" \
	"$(output cold resolved)" "$key" "$archive" "$(($(stat -c %s "$RUN/cold/ws/$archive") >> 20))" >&2

log "warm: a fresh workspace, the image gone from the engine, the cache restored under $key"
mkdir -p "$RUN/store"
cp -a "$RUN/cold/ws/.tender-images" "$RUN/store/$key" # what actions/cache/save keeps
"${E[@]}" image rm -f tender-verifier/pytest >/dev/null
if "${E[@]}" images --format '{{.Repository}}' | grep -q '^tender-verifier/'; then die "the verifier image is still there"; fi
workspace warm
cp -a "$RUN/store/$key" "$RUN/warm/ws/.tender-images" # what actions/cache/restore gives back
t=$(now)
step warm -e INPUT_COMMAND=grade -e INPUT_SUITE=suite -e INPUT_OUT=tender-out -e INPUT_FAIL-ON=error \
	-e INPUT_IMAGE-CACHE=.tender-images >"$RUN/warm.out" 2>"$RUN/warm.err" ||
	{ tail -n 40 "$RUN/warm.err" >&2; die "the warm grade failed"; }
warm_time=$(since "$t")
grep -E '^image .*from the image cache' "$RUN/warm.err" >&2 || die "the warm grade did not load the image from the cache"
if grep -q debootstrap "$RUN/warm.err"; then die "the warm grade ran debootstrap"; fi
warm_id=$("${E[@]}" image inspect --format '{{.Id}}' tender-verifier/pytest)
[[ $warm_id == "$verifier_id" ]] || die "the image from the cache is $warm_id, not the built $verifier_id"
check_bundle warm "$verifier_id"
[[ $(output warm image-key) == "$key" ]] || die "the warm image-key differs"

log "command: image on the warm workspace (the image is there: nothing built, image-key set)"
: >"$RUN/warm/file_commands/set_output"
step warm -e INPUT_COMMAND=image -e INPUT_SUITE=suite -e INPUT_IMAGE-CACHE=.tender-images \
	>"$RUN/image.out" 2>"$RUN/image.err" || { cat "$RUN/image.err" >&2; die "command: image failed"; }
grep -q "^(verifier) tender-verifier/pytest $verifier_id" "$RUN/image.out" || die "command: image printed $(cat "$RUN/image.out")"
[[ $(output warm image-key) == "$key" ]] || die "command: image set image-key $(output warm image-key)"

log "ok: the consumer path graded $SUITE with every expect met: cold ${cold_time} s (the image built in a helper), warm ${warm_time} s (loaded from the cache); $(since "$total") s in all"
