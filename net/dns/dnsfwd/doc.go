// Package dnsfwd is the router's DNS forwarder and cache: the job
// dnsmasq does on OpenWrt. LAN clients ask the router; it answers the
// LAN's own names itself and forwards everything else to the upstream
// servers the WAN's DHCP lease names, caching the answers.
//
// # Transport
//
// The package opens no sockets. ServeUDP and ServeTCP take a
// net.PacketConn and a net.Listener, and upstream connections come from
// Config.Dial, so the firmware hands it gVisor's gonet adapters and the
// tests hand it host sockets. miekg/dns's Server is not used for
// serving: it accepts a generic PacketConn, but starts a goroutine per
// datagram with no bound and builds a dns.Msg per query; here one
// goroutine reads, answers cache hits and local names without
// allocating, and only queries for an upstream get a goroutine, at most
// MaxInFlight of them.
//
// Shipped code does not import miekg/dns at all, not even for its
// constants: it pulls in crypto/tls and crypto/x509, over half a MiB of
// a 16 MiB image. The package names its own registry values, each cited
// (wire.go); the tests use miekg/dns as an independent peer and check
// those values against it.
//
// # What is answered where
//
//   - <RouterName>, <RouterName>.<Domain>: RouterAddr.
//   - <host>.<Domain> and a bare <host>: Config.Local (the DHCP leases).
//     A known host without an address of the asked type gets NODATA;
//     an unknown one NXDOMAIN. Nothing under Domain and no single-label
//     name is ever forwarded (dnsmasq's local=/lan/ and domain-needed).
//     Local answers carry TTL 0 (dnsmasq's local-ttl default): a lease
//     may move at any time. "router.<Domain>" is not an alias; only
//     RouterName is.
//   - PTR queries for private IPv4 space (RFC 1918, loopback, link-local,
//     CGNAT, 0/8) are never forwarded (dnsmasq's bogus-priv): RouterAddr
//     and, if Local implements LocalReverse, leased addresses get their
//     name, everything else NXDOMAIN.
//   - Everything else is forwarded.
//
// # Forwarding
//
// Upstreams are tried in order: a timeout (Config.Timeout per try),
// SERVFAIL, REFUSED, NOTIMP, FORMERR or a malformed answer moves to the
// next; a truncated UDP answer is asked again over TCP of the same
// server; none left is SERVFAIL. Every try uses a fresh random query ID
// and a fresh connection (so a fresh source port), and an answer must
// carry that ID and the same question (RFC 5452) or it is ignored and
// counted. The client's question goes upstream as spelled, so a
// client's 0x20 case randomisation survives. Identical queries in
// flight at once are each forwarded; there is no coalescing.
//
// # Cache
//
// Answers are kept in wire format, keyed by the question (name
// compared case-insensitively, type, class) and the client's DO and CD
// bits. A positive answer is held for its smallest answer TTL, at most
// a day; NXDOMAIN and NODATA for the SOA's min(TTL, MINIMUM), at most
// three hours (RFC 2308 §5); a negative answer without an SOA, or
// SERVFAIL, is not held. Served answers get the client's ID and
// question spelling and every TTL lowered by the time held. The cache
// is an LRU bounded both by entries (CacheSize, default 1000 as
// OpenWrt's dnsmasq) and bytes (CacheBytes, default 1 MiB); one answer
// may take at most an eighth of the bytes. Records are only ever served
// as the answer to the question they came with, so additional records
// in an answer cannot poison other names.
//
// # EDNS and truncation
//
// The forwarder advertises a 1232-byte UDP payload (DNS Flag Day 2020)
// to clients and upstreams. A UDP answer is limited to the client's
// advertised size clamped to [512, 1232], or 512 without EDNS; a larger
// one is sent as header and question with TC set, and the client
// retries over TCP. EDNS versions other than 0 get BADVERS.
//
// # Rebind protection
//
// With RebindProtection, an upstream answer with an A or AAAA record in
// private, loopback, link-local, CGNAT or documentation space (dnsmasq's
// stop-dns-rebind list, see privateNets) is refused: the client gets
// REFUSED with Extended DNS Error 15 "Blocked" (RFC 8914) and nothing is
// cached. Domains in RebindAllow are exempt. Go's zero value leaves the
// protection off; the router's configuration turns it on, as OpenWrt's
// rebind_protection=1 default does.
//
// # Bad input
//
// A message shorter than a header, or with QR set, is dropped; a query
// that cannot be read, or whose QDCOUNT is not 1, gets FORMERR; an
// opcode other than QUERY gets NOTIMP; a class other than IN, AXFR and
// IXFR get REFUSED. A question with a compression pointer is FORMERR
// (no client sends one). All are counted in Stats.
//
// # Limits
//
// No DNSSEC validation (the AD bit is never set; DO and CD pass through
// to the upstream, which may validate), no DNS over TLS or HTTPS, no
// zone transfers, no IPv6 reverse zones kept local, no query
// coalescing, and no persistence of the cache. The transports are
// whatever the caller provides; the firmware provides IPv4.
package dnsfwd
