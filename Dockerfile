# The Tender GitHub Action. Both base images can be overridden, so CI can build this offline
# from locally imported images (.ci/action-image.sh); the defaults are what a runner pulls.
ARG GO_IMAGE=golang:1.26-bookworm
ARG BASE_IMAGE=debian:bookworm-slim

FROM ${GO_IMAGE} AS build
WORKDIR /src
ENV CGO_ENABLED=0 GOTOOLCHAIN=local
COPY . .
# Exec form: the offline builder image holds the Go toolchain and a module proxy, no shell.
RUN ["go", "build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w", "-o", "/out/tender", "."]

FROM ${BASE_IMAGE}
# git for materializing workspaces, debootstrap to build the verifier image offline, and CA
# certificates for the API. Skipped when the base already has them (the offline CI base does).
RUN if ! command -v git >/dev/null || ! command -v debootstrap >/dev/null; then \
      apt-get update && \
      apt-get install -y --no-install-recommends git ca-certificates debootstrap && \
      rm -rf /var/lib/apt/lists/*; \
    fi
COPY --from=build /out/tender /usr/local/bin/tender
# GitHub runs container actions with the workspace as the working directory and the host's
# Docker socket mounted, so verifiers start on the host engine. No arguments: Action mode.
ENTRYPOINT ["/usr/local/bin/tender"]
