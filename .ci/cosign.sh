#!/usr/bin/env bash
# Checks signed evidence bundles with a standard tool: cosign verify-blob-attestation at the
# version .ci/cosign/go.mod pins (a module of its own, so cosign is no dependency of Tender),
# built through the Go module proxy with the go.sum committed beside it. The binary is cached
# under the pin and the go.sum digest, so only the first run builds. Measured on the shared
# 2-core machine: a cold build 1614 s of wall time (6 min 52 s of CPU) at load 22, 926 s at load
# 18 (without -trimpath); with a warm Go build cache 20 s; with the cached binary none, and the
# tests take about 9 s. The build is bounded at 45 min. Then it runs the report/bundle tests
# built with -tags cosign (standard_cosign_test.go).
set -euo pipefail
cd "$(dirname "$0")/.."

version=$(awk '$1 == "github.com/sigstore/cosign/v2" { print $2 }' .ci/cosign/go.mod)
cache=${TENDER_CI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tender-ci}
bin="$cache/cosign-$version-$(sha256sum .ci/cosign/go.sum | cut -c1-12)"
if [ ! -x "$bin" ]; then
  echo "cosign: building $version into $bin (bounded at 45 min)"
  mkdir -p "$cache"
  start=$(date +%s)
  (cd .ci/cosign && GOFLAGS="${GOFLAGS:-} -mod=readonly" timeout 45m \
    go build -trimpath -o "$bin.tmp" github.com/sigstore/cosign/v2/cmd/cosign)
  mv "$bin.tmp" "$bin"
  echo "cosign: built in $(( $(date +%s) - start )) s"
fi

out=$(TENDER_COSIGN="$bin" go test -tags cosign -count=1 -run '^TestCosign' -v ./report/bundle/ 2>&1) || {
  printf '%s\n' "$out" >&2
  echo "CI: FAIL: cosign did not verify the bundles as the tests expect" >&2
  exit 1
}
for t in TestCosignVerifiesBundles TestCosignRefusesInputsAsSubjects; do
  if ! grep -q -- "^--- PASS: $t " <<<"$out"; then
    printf '%s\n' "$out" >&2
    echo "CI: FAIL: $t did not run and pass" >&2
    exit 1
  fi
done
grep -E '^(--- |ok )|cosign refused' <<<"$out"
