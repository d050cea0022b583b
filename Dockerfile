# The Tender GitHub Action. Both base images can be overridden, so CI can build this offline
# from locally imported images (.ci/action-image.sh); the defaults are what a runner and the
# release workflow pull, pinned by the digest of the tag's multi-platform index. The Go tag's
# version is go.mod's go line. docs/action.md says how the digests are chosen and renewed.
ARG GO_IMAGE=golang:1.26.8-bookworm@sha256:dc9ad6c05acc7a88e5b71bde60a5fe3bd4b9f0db209011711b464107438a8107
ARG BASE_IMAGE=debian:bookworm-slim@sha256:63a496b5d3b99214b39f5ed70eb71a61e590a77979c79cbee4faf991f8c0783e

FROM ${GO_IMAGE} AS build
WORKDIR /src
ENV CGO_ENABLED=0 GOTOOLCHAIN=local
COPY . .
# Exec form: the offline builder image holds the Go toolchain and a module proxy, no shell.
RUN ["go", "build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w", "-o", "/out/tender", "."]

FROM ${BASE_IMAGE}
# git for materializing workspaces, debootstrap for the verifier images (in the Action, a
# helper container of this image runs it), and CA certificates for the API. Skipped when the
# base already has them (the offline CI base does).
RUN if ! command -v git >/dev/null || ! command -v debootstrap >/dev/null; then \
      apt-get update && \
      apt-get install -y --no-install-recommends git ca-certificates debootstrap && \
      rm -rf /var/lib/apt/lists/*; \
    fi
COPY --from=build /out/tender /usr/local/bin/tender
# GitHub runs container actions with the workspace as the working directory and the host's
# Docker socket mounted, so verifiers start on the host engine. No arguments: Action mode.
ENTRYPOINT ["/usr/local/bin/tender"]
