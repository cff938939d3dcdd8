#!/usr/bin/env bash
# The project's whole test suite: what `make test` and CI run.
# Needs: Go, qemu-user (qemu-mips) and the packages .ci/run installs.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

step "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
	echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

step "go vet (host, mips, mipsle, arm)"
go vet ./...
GOOS=linux GOARCH=mips GOMIPS=softfloat go vet ./...
GOOS=linux GOARCH=mipsle GOMIPS=softfloat go vet ./...
# The kernel's hazard-injection build (kernel/boottest boots it).
GOOS=linux GOARCH=mips GOMIPS=softfloat go vet -tags gowrt_hazard ./kernel/...
GOOS=linux GOARCH=arm GOARM=7 go vet ./...

step "go test -race (host)"
go test -race -count=1 ./...

step "go test on big-endian MIPS under qemu-mips"
# Packages whose tests run on the host only (they start QEMU system
# emulation, network namespaces, or need root) declare themselves with a
# `//go:build !mips` style constraint or skip nothing: they simply have no
# test files for mips. Everything else runs here.
GOOS=linux GOARCH=mips GOMIPS=softfloat go test -count=1 -exec qemu-mips ./...
