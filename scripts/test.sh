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

step "citations stay inside the module"
# Comments cite upstream sources (FreeBSD, Linux, QEMU and OpenWrt files,
# datasheets, architecture manuals), never files a clone of this repository
# lacks: the project's private notes or paths on a build machine. The
# bracketed spaces and slashes keep this file from matching itself.
outside='(qemu-malta|ar71xx-soc|arge|arswitch|kernel-mips-linux-abi|mips-wait-idle|ath-powersave-and-sample|axge)\.md|reference[/][[:alnum:]_-]+\.md|reference[ ]§|reference[ ]\((§|[[:alnum:]_-]+\.md)|shared[/]|project[ ]reference|reference[ ]notes|[/]work[/]|\.\.[/]shared|DESIGN(\.md)?[ ]§'
rc=0
offending=$(git grep -n -E "$outside" -- '*.go' '*.s' '*.sh' 'Makefile') || rc=$?
if [ "$rc" -eq 0 ]; then
	echo "cite upstream sources, not files outside the module:"; echo "$offending"; exit 1
elif [ "$rc" -ne 1 ]; then
	echo "git grep failed ($rc)"; exit 1
fi

step "go vet (host, mips, mipsle, arm)"
go vet ./...
GOOS=linux GOARCH=mips GOMIPS=softfloat go vet ./...
GOOS=linux GOARCH=mipsle GOMIPS=softfloat go vet ./...
GOOS=linux GOARCH=arm GOARM=7 go vet ./...

step "go test -race (host)"
go test -race -count=1 ./...

step "go test on big-endian MIPS under qemu-mips"
# Packages whose tests run on the host only (they start QEMU system
# emulation, network namespaces, or need root) declare themselves with a
# `//go:build !mips` style constraint or skip nothing: they simply have no
# test files for mips. Everything else runs here.
GOOS=linux GOARCH=mips GOMIPS=softfloat go test -count=1 -exec qemu-mips ./...
