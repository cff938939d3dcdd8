#!/usr/bin/env bash
# Fetches Debian bookworm's little-endian MIPS Malta kernel (linux-image-*-4kc-malta,
# mipsel) for BenchmarkXferMaltaLE in board/malta/boottest, which boots it beside
# gowrt in the same QEMU as the comparison point. Debian ships no big-endian mips
# kernel in bookworm, so there is no malta-be counterpart.
#
# The package comes through apt from the machine's configured Debian
# sources: mipsel is added as a foreign architecture (dpkg
# --add-architecture; needs root the first time), and the versioned image
# package the linux-image-4kc-malta metapackage depends on today is fetched
# with apt-get download, which checks it against the signed index. The
# result goes to ${XDG_CACHE_HOME:-~/.cache}/gowrt/linux-malta-le:
#
#	vmlinuz         the kernel (an ELF that QEMU's -kernel loads)
#	modules/*.ko    pcnet32 and the modules it depends on
#	modules.order   their names, dependencies first: the order to load them in
#	VERSION         the package name and version
#
# Needs apt, xz and dpkg-deb. Re-running replaces the cache directory.
set -euo pipefail

dest=${XDG_CACHE_HOME:-$HOME/.cache}/gowrt/linux-malta-le
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if ! dpkg --print-foreign-architectures | grep -qx mipsel; then
	if [ "$(id -u)" != 0 ]; then
		echo "mipsel is not a dpkg architecture here yet: run this once as root (it runs dpkg --add-architecture mipsel and apt-get update)" >&2
		exit 1
	fi
	dpkg --add-architecture mipsel
	apt-get update -qq
fi
if ! apt-cache show linux-image-4kc-malta:mipsel >/dev/null 2>&1; then
	[ "$(id -u)" = 0 ] && apt-get update -qq
fi

# The metapackage depends on exactly one versioned image package.
pkg=$(apt-cache depends linux-image-4kc-malta:mipsel |
	sed -n 's/^ *Depends: \(linux-image-[^ :]*-4kc-malta\)\(:mipsel\)\{0,1\}$/\1/p' | head -n1)
[ -n "$pkg" ] || { echo "no linux-image-4kc-malta for mipsel in the apt sources" >&2; exit 1; }
version=$(apt-cache show --no-all-versions "$pkg:mipsel" | sed -n 's/^Version: //p' | head -n1)
echo "fetching $pkg $version"
# As root apt downloads as its own _apt user: give it a directory it may
# write.
mkdir "$work/dl"
chmod 711 "$work" && chmod 777 "$work/dl"
(cd "$work/dl" && apt-get download -qq "$pkg:mipsel=$version")
mv "$work"/dl/"$pkg"_*.deb "$work/pkg.deb"

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
