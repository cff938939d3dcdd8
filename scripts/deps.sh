#!/usr/bin/env bash
# The one list of Debian packages gowrt's tests need, and the one way to get
# them. `make test` and .ci/run both use it.
#
#	scripts/deps.sh check     exit 0 when every package's tool is there;
#	                          otherwise name what is missing and the exact
#	                          apt-get line, exit 1
#	scripts/deps.sh install   as root: install what is missing (apt-get,
#	                          no recommended packages: the tests need none)
#	scripts/deps.sh ensure    install as root, check otherwise (make test)
#	scripts/deps.sh list      the package names
#
# Each entry is "package:probe", the probe being a command the package
# provides (or an absolute path it installs): a tool counts as present
# whichever way it was installed.
set -euo pipefail

deps=(
	make:make
	git:git
	ca-certificates:/etc/ssl/certs/ca-certificates.crt # the Go module proxy over TLS
	qemu-user:qemu-mips                                # big-endian MIPS unit tests
	qemu-system-mips:qemu-system-mips                  # malta boot tests, both byte orders
	qemu-system-mips:qemu-system-mipsel
	binutils-mips-linux-gnu:mips-linux-gnu-objdump # the kernel's trap-path discipline check
	iproute2:ip                                    # network namespaces, TAP devices
	iputils-ping:ping                              # end-to-end tests
	curl:curl
	iperf3:iperf3
	isc-dhcp-client:dhclient # LAN clients of the router's DHCP server
	dnsmasq-base:dnsmasq     # the ISP on the router's WAN (DHCP, DNS)
	bind9-dnsutils:dig       # DNS queries to the router's forwarder
	traceroute:traceroute    # ICMP errors through NAT
	openssh-client:ssh       # SSH logins to the firmware (and ssh-keygen)
	chromium:chromium        # the web UI in a headless browser
	procps:sysctl    # the broadcast-storm test
	coreutils:sha256sum
	u-boot-tools:mkimage # fwimage: mkimage -l and dumpimage check the uImages
	xz-utils:xz          # fwimage: unpacks the LZMA payload as a second decoder
	openssl:openssl      # sysupgrade: its ed25519 keys and signatures checked against OpenSSL
	tshark:tshark # wlan, wlan/wpa: Wireshark reads the 802.11 frames and decrypts the WPA2 handshake and CCMP (its debconf question about non-root capture takes the default, no, under DEBIAN_FRONTEND=noninteractive)
)

present() {
	case $1 in
	/*) [ -e "$1" ] ;;
	*) command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ] || [ -x "/sbin/$1" ] ;;
	esac
}

# missing prints the packages whose probe is absent, once each.
missing() {
	local seen=" " e pkg probe
	for e in "${deps[@]}"; do
		pkg=${e%%:*} probe=${e#*:}
		if ! present "$probe" && [[ $seen != *" $pkg "* ]]; then
			seen+="$pkg "
			echo "$pkg"
		fi
	done
}

check() {
	local m
	m=$(missing | tr '\n' ' ')
	[ -z "$m" ] && return 0
	echo "gowrt's tests need Debian packages that are not installed: $m" >&2
	echo "Install them (as root) with:" >&2
	echo "    apt-get install --no-install-recommends $m" >&2
	echo "or run the tests as root, which installs them." >&2
	return 1
}

install() {
	local m
	m=$(missing | tr '\n' ' ')
	[ -z "$m" ] && return 0
	if [ "$(id -u)" != 0 ]; then
		check
		return 1
	fi
	echo "installing $m"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086 # one word per package
	apt-get install -y -qq --no-install-recommends $m
	check
}

case ${1:-} in
check) check ;;
install) install ;;
ensure) if [ "$(id -u)" = 0 ]; then install; else check; fi ;;
list) for e in "${deps[@]}"; do echo "${e%%:*}"; done | uniq ;;
*)
	echo "usage: $0 check|install|ensure|list" >&2
	exit 2
	;;
esac
