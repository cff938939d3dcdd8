// Package nat is the router's IPv4 connection tracking and NAT engine: the
// core of the forwarding path between the LAN and the WAN.
//
// It works on IPv4 packets in byte slices the caller owns and rewrites
// them in place. It knows nothing about NICs, Ethernet, gVisor or
// configuration: the forward layer (net/forward) hands it every unicast
// IPv4 packet addressed to the router's MAC (Table.Forward) and every
// packet the router's own stack sends (Table.Output), and a Policy (the
// firewall) decides what happens to packets that belong to no connection.
//
// # Fast path
//
// A packet of a known connection costs one parse, one hash lookup under
// the table's mutex (state machine, timestamp and counters updated there),
// and, after the lock is released, the rewrite: addresses and ports with
// RFC 1624 incremental updates of the TCP/UDP/ICMP checksums, TTL - 1, the
// IP header checksum (recomputed over the 20-60 header bytes, so a packet
// that leaves always carries a valid one) and, on SYNs, the MSS clamp.
// Nothing allocates. Each Conn carries a next-hop cache per direction
// (Hop/SetHop, a seqlock over atomic words) that the forward layer fills,
// so an established flow needs no neighbour lookup either.
//
// The slow path (no connection) calls the Policy without the lock held.
// A Forward decision creates the connection: its original tuple as the
// packet arrived and its reply tuple as answers will arrive after NAT,
// both linked into the hash table, so a WAN packet finds its connection by
// the tuple it carries. Masquerading keeps the source port when the reply
// tuple (proto, WAN address:port, destination:port) is free and otherwise
// searches Config.PortRange from a hashed offset, at most 128 ports
// (Drop NoPort after that); ICMP echo identifiers are mapped the same way.
//
// # Locking
//
// One mutex guards the table. The critical section of a hit is a hash
// lookup and a few stores; rewriting happens outside it. The boards gowrt
// runs on (the AR71xx family, Malta) have a single core, so the mutex is
// never contended there and sharding it would only add work (an entry's
// two tuples hash to different buckets, so eviction and port allocation
// would need several locks). On multi-core hosts (sim mode)
// BenchmarkForwardEstablishedParallel shows what contention costs.
// Conn.Established, the hop cache and Stats are read without the lock.
//
// # Table size, expiry, eviction
//
// The table is preallocated (Config.MaxConns, DefaultMaxConns for a
// 32 MiB board) with a power-of-two bucket array and a free list. Entries
// expire lazily: a lookup that finds an expired entry reclaims it, each
// new connection sweeps a few buckets, and Table.Sweep sweeps all of them
// (the caller may run it every few seconds to keep Stats.Conns exact; no
// goroutine is needed). When no slot is free, the buckets near the new
// tuple are searched (32 of them) for an expired entry or, failing that,
// for the unassured entry closest to expiry (a TCP connection whose
// handshake did not complete, a UDP flow that is not a stream, ICMP),
// which is evicted as Linux's early_drop does; if every candidate is
// assured the packet is dropped with TableFull.
//
// # Tracking
//
// TCP follows a simplified Linux state machine (SYN_SENT, SYN_RECV,
// ESTABLISHED, FIN_WAIT, CLOSE_WAIT, LAST_ACK, TIME_WAIT, CLOSE) without
// sequence-number windows. Only a SYN without ACK creates a connection;
// other TCP packets without one are still shown to the policy (they may be
// for the router: Local, Reject or Drop), but a Forward decision for them
// is Drop Invalid, so connections that predate the table (a router
// reboot) are not picked up mid-stream. RST closes; a new SYN on a
// TIME_WAIT or CLOSE connection reopens it with the same mapping. UDP
// becomes a stream (longer timeout, not evicted) when it keeps talking
// after its first reply. ICMP echo is tracked by identifier. Other
// protocols (GRE, ESP, ...) are tracked by addresses only and may be
// masqueraded too, one host per (protocol, remote address); protocols
// whose checksums cover a pseudo-header (DCCP, UDP-Lite, SCTP) are not
// rewritten beyond their IP header, so NAT breaks them.
//
// ICMP destination unreachable, time exceeded and parameter problem
// errors are matched by the packet they quote (the router sent it after
// NAT, so it matches the connection in the other direction): the outer
// destination becomes the connection's origin, the quoted header and
// ports get their original values back, and the quoted checksums and the
// ICMP checksum are updated incrementally. Errors that match no connection
// are shown to the policy by addresses: Local delivers them to the
// router's stack (errors about its own untracked packets), anything else
// is Drop Invalid; they are never forwarded. Source quench and redirects
// are not translated.
//
// A packet of a connection must arrive on the interface of its
// direction: the original direction where the first packet came in,
// replies where the original direction leaves. Anything else is Drop
// Invalid, a cheap reverse-path check that keeps a host on one side from
// injecting packets into flows of the other (asymmetric routing through
// two interfaces is therefore not supported).
//
// The router's own traffic passes Output, which creates connections
// without NAT, so replies come back from Forward as Local with their Conn
// (established), which the firewall accepts without asking the policy.
// Replies must arrive on the interface given to Output.
//
// # Fragments
//
// IPv4 fragments are translated without reassembly, as many small NATs
// do. The first fragment (offset 0) carries the transport header: it is
// tracked, asked about and translated like an unfragmented packet (it must
// hold the whole TCP or UDP header; a tiny first fragment that splits the
// TCP header is Malformed, RFC 1858). Its checksum update depends only on
// the addresses and ports that change, so it is right for the whole
// datagram. When it passes, forwarded or delivered as part of one of the
// router's own connections, it leaves an entry in a small fragment table
// (Config.MaxFrags, DefaultMaxFrags; sets of 4 entries, preallocated),
// keyed by source, destination, protocol and identification as the
// datagram arrived (RFC 791 section 3.2), holding the connection (slot
// and generation), the direction and the addresses the datagram leaves
// with.
//
// A later fragment (offset > 0) has no ports; it looks its entry up and
// follows the first fragment: the same connection, direction, egress
// interface and next hop (Verdict as for the first), the addresses
// rewritten, TTL - 1 and the IP header checksum; the policy is not asked
// again. The connection's rules apply: the fragment must arrive on the
// interface of its direction (else Drop Invalid), and TTL <= 1 is Drop
// TTLExceeded (RFC 1812 forbids an ICMP error about a non-first fragment,
// so the caller sends none). An entry is freed once the fragments seen add
// up to the datagram's length (they may arrive in any order after the
// first), when it is older than Timeouts.Fragment (30 s, Linux's
// ipfrag_time), and when its connection ends: a fragment whose entry
// names a recycled slot (another generation) or an expired connection
// finds nothing. A full set gives up its oldest entry for a new datagram
// (Stats.FragEvicted); Stats.FragTracked counts recorded first fragments.
//
// Fragments that arrive before their first one are not held back: they
// find no entry and, like every fragment without one, are shown to the
// policy by addresses only. Local ones go to the router's stack (gVisor
// reassembles them), the rest are dropped with reason Fragment, and the
// datagram is lost; the sender's retransmission usually arrives in order.
// ICMP errors that are themselves fragmented are treated the same way,
// and an ICMP error quoting a non-first fragment cannot be matched to a
// connection (no ports), so it is never forwarded.
//
// # Not supported yet
//
// IPv6 (this package is IPv4 only),
// application helpers (FTP, SIP, PPTP, H.323), fragment reassembly (and
// so buffering fragments that overtake their first one),
// TCP sequence/window checking, hairpin NAT beyond what Decision.SNAT and
// DNAT together express, per-host connection limits, and conntrack zones.
package nat
