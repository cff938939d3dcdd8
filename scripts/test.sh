#!/usr/bin/env bash
# The project's whole test suite: what `make test` and CI run.
# Needs Go; the Debian packages the tests use are listed in scripts/deps.sh,
# which installs the missing ones when this runs as root and otherwise
# stops at once with the apt-get line to run.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=$PATH:/usr/local/go/bin

step() { printf '\n== %s\n' "$*"; }

step "tools"
if ! command -v go >/dev/null; then
	echo "gowrt needs Go $(sed -n 's/^go //p' go.mod) or newer on PATH (the stock toolchain)" >&2
	exit 1
fi
go version
./scripts/deps.sh ensure

step "no build outputs tracked"
built=()
while IFS= read -r -d '' f; do
	[ -f "$f" ] || continue
	case $f in
	*.test | *.elf | *.o | *.a | *.so | *.exe | *.prof) built+=("$f"); continue ;;
	esac
	case $(head -c 8 "$f" | od -An -c | tr -d ' ') in
	177ELF* | '!<arch>\n'*) built+=("$f") ;;
	esac
done < <(git ls-files -z)
if [ ${#built[@]} -gt 0 ]; then
	echo "build outputs are tracked in git (git rm --cached them; .gitignore covers them):"
	printf '  %s\n' "${built[@]}"
	exit 1
fi

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
# The hazard-injection builds: the kernel's (kernel/boottest boots it) and
# the drivers' in-driver wrong-code hooks (their hazard tests below).
GOOS=linux GOARCH=mips GOMIPS=softfloat go vet -tags gowrt_hazard ./kernel/... ./arge/... ./pcnet/... ./usbnet/axge/... ./usbnet/uhci/... ./usbnet/ehci/... ./ath/ar9300/...
GOOS=linux GOARCH=arm GOARM=7 go vet ./...

step "go test -race (host)"
# The race detector slows the image builds' LZMA (cmd/gowrt) several-fold:
# a package gets 20 minutes, not go test's default 10.
go test -race -count=1 -timeout 20m ./...
# The wrong variants that need a driver's own hook (an ordering no wrapped
# contract can produce) exist only in -tags gowrt_hazard builds.
go test -race -count=1 -tags gowrt_hazard -run '^TestHazard' ./arge/... ./pcnet/... ./usbnet/axge/... ./usbnet/uhci/... ./usbnet/ehci/... ./ath/ar9300/...

step "go test on big-endian MIPS under qemu-mips"
# Packages whose tests run on the host only (they start QEMU system
# emulation, network namespaces, or need root) declare themselves with a
# `//go:build !mips` style constraint or skip nothing: they simply have no
# test files for mips. Everything else runs here.
GOOS=linux GOARCH=mips GOMIPS=softfloat go test -count=1 -exec qemu-mips ./...
