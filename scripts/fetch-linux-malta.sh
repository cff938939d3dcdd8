#!/usr/bin/env bash
# Fetches Debian bookworm's little-endian MIPS Malta kernel (linux-image-*-4kc-malta,
# mipsel) for BenchmarkEchoMaltaLE in board/malta/boottest, which boots it beside
# gowrt in the same QEMU as the comparison point. Debian ships no big-endian mips
# kernel in bookworm, so there is no malta-be counterpart.
#
# The version is whatever the mipsel Packages index names as the dependency of the
# linux-image-4kc-malta metapackage today; the .deb's SHA256 is checked against the
# index. The result goes to ${XDG_CACHE_HOME:-~/.cache}/gowrt/linux-malta-le:
#
#	vmlinuz         the kernel (an ELF that QEMU's -kernel loads)
#	modules/*.ko    pcnet32 and the modules it depends on
#	modules.order   their names, dependencies first: the order to load them in
#	VERSION         the package name and version
#
# Needs curl, xz and dpkg-deb. Re-running replaces the cache directory.
set -euo pipefail

mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
dest=${XDG_CACHE_HOME:-$HOME/.cache}/gowrt/linux-malta-le
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

curl -sSf "$mirror/dists/bookworm/main/binary-mipsel/Packages.xz" | xz -d >"$work/Packages"

# field PACKAGE FIELD: one field of one stanza of the index.
field() {
	awk -v pkg="$1" -v f="$2:" '
		$1 == "Package:" { in_pkg = ($2 == pkg) }
		in_pkg && $1 == f { sub(/^[^:]*: */, ""); print; exit }
	' "$work/Packages"
}

# The metapackage depends on exactly one versioned image package.
pkg=$(field linux-image-4kc-malta Depends | sed -n 's/^\(linux-image-[^ ,]*-4kc-malta\) .*/\1/p')
[ -n "$pkg" ] || { echo "no linux-image-4kc-malta in the mipsel index" >&2; exit 1; }
version=$(field "$pkg" Version)
file=$(field "$pkg" Filename)
sum=$(field "$pkg" SHA256)
echo "fetching $pkg $version"
curl -sSf -o "$work/pkg.deb" "$mirror/$file"
echo "$sum  $work/pkg.deb" | sha256sum -c --quiet -

dpkg-deb -x "$work/pkg.deb" "$work/root"
rm -rf "$dest.new"
mkdir -p "$dest.new/modules"
cp "$work/root"/boot/vmlinu[xz]-* "$dest.new/vmlinuz"

# The .deb has no modules.dep (depmod makes it at install time), so the
# dependencies come from each module's own "depends=" .modinfo entry.
# Modules may be shipped compressed (.ko.xz); they are stored plain.
# A module's name has '_' where its file name may have '-'.
find_ko() {
	local pat=${1//_/[-_]}
	find "$work/root/lib/modules" \( -name "$pat.ko" -o -name "$pat.ko.xz" \) | head -n1
}
order=()
add() {
	local name=$1 ko dep
	for dep in "${order[@]}"; do [ "$dep" = "$name" ] && return; done
	ko=$(find_ko "$name")
	[ -n "$ko" ] || { echo "module $name not in $pkg" >&2; exit 1; }
	case $ko in
	*.xz) xz -dc "$ko" >"$dest.new/modules/$name.ko" ;;
	*) cp "$ko" "$dest.new/modules/$name.ko" ;;
	esac
	for dep in $(tr '\0' '\n' <"$dest.new/modules/$name.ko" | sed -n 's/^depends=//p' | tr ',' ' '); do
		add "$dep"
	done
	order+=("$name")
}
add pcnet32
printf '%s\n' "${order[@]}" >"$dest.new/modules.order"
echo "$pkg $version" >"$dest.new/VERSION"

rm -rf "$dest"
mv "$dest.new" "$dest"
echo "$dest: $(cat "$dest/VERSION"), modules: ${order[*]}"
