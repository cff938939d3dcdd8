#!/usr/bin/env bash
# Takes the firmware profile again: internal/image/firmware.pgo, which
# every image is built with (go build -pgo; see internal/image/pgo.go).
#
# It profiles, on QEMU malta under -icount (samples count instructions):
#   - progs/natbench forwarding NATed and bridged 1514-byte frames, both
#     byte orders (BenchmarkNATInstructions, 40 bursts of 20000 frames);
#   - progs/routertest's TCP upload and download on malta-le
#     (BenchmarkXferInstructionsMaltaLE, five guest seconds each);
# and merges the profiles into one with go tool pprof.
#
# Run as root (the benchmarks make network namespaces and TAPs), after a
# change moves the hot paths; the images it profiles are built with the
# profile already there, which is how Go's PGO is meant to iterate.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=$PATH:/usr/local/go/bin

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# The profiles are taken before the measured windows, which a busy host
# can fail (too few saturated intervals): such a failure is reported but
# the profiles it took are used. A missing profile stops the script.
GOWRT_NATBENCH_PROFILE=$dir GOWRT_NATBENCH_PROFILE_BURSTS=40 \
	go test ./board/malta/boottest -run '^$' -bench 'NATInstructions/.*/.*/1514$' -benchtime 1x -timeout 30m ||
	echo "pgo-profile: BenchmarkNATInstructions failed; using the profiles it took" >&2
GOWRT_TCPBENCH_PROFILE=$dir \
	go test ./board/malta/boottest -run '^$' -bench 'XferInstructionsMaltaLE' -benchtime 1x -timeout 30m ||
	echo "pgo-profile: BenchmarkXferInstructionsMaltaLE failed; using the profiles it took" >&2
for f in malta-be-nat-1514 malta-le-nat-1514 malta-be-bridge-1514 malta-le-bridge-1514 tcp-up tcp-down; do
	if [ ! -s "$dir/$f.pprof" ]; then
		echo "pgo-profile: no profile $f" >&2
		exit 1
	fi
done
go tool pprof -proto "$dir"/*.pprof >"$dir/merged.pgo"
mv "$dir/merged.pgo" internal/image/firmware.pgo
echo "internal/image/firmware.pgo: $(wc -c <internal/image/firmware.pgo) bytes"
