// Package firewall is gowrt's packet filter, configured and behaving like
// OpenWrt's fw4: the same /etc/config/firewall sections, the same
// defaults (DefaultText), the same order of evaluation.
//
// # Model
//
// Networks (lan, wan) are grouped into zones. Each zone has three
// policies: input (traffic to the router from the zone), output (from the
// router into the zone) and forward (traffic forwarded between networks of
// the same zone). A forwarding section accepts forwarded traffic from one
// zone to another. Rules match traffic by zone, protocol, addresses,
// ports and ICMP type and accept, reject or drop it; redirects send
// connections arriving at the router from a zone on to a host (DNAT).
//
// Load turns a parsed file (config/uci) into a Config, checking every
// section and option and reporting every problem at once, each naming the
// file, line, section and option:
//
//	firewall:31: rule 'Allow-SSH' (@rule[2]): option 'dest_port': invalid port "70000" ...
//
// Compile resolves the Config against the router's networks, mapping
// network names to interface numbers, into a Ruleset whose Input,
// Forward, Output, Redirect, Masquerade and MSSClamp methods decide
// packets without allocating.
//
// # Evaluation order
//
// fw4 (firewall4's ruleset.uc and fw4.uc) builds, per hook, a main chain
// of the rules whose zone is '*', then one chain per zone chosen by the
// packet's interface, ending in the zone's policy. Ruleset follows it:
//
//   - Input: rules with src '*' and no dest; then the rules with src =
//     the packet's zone and no dest; then redirected traffic is accepted
//     if the zone has redirects; then the zone's input policy. An
//     interface in no zone gets the default input policy.
//   - Forward: rules with src '*' and a dest; then the zone's rules with a
//     dest, then its forwardings (a dest zone matches only traffic leaving
//     through that zone; '*' matches any); then redirected traffic
//     (Packet.DNAT) is accepted; then, for traffic leaving through the
//     same zone, the zone's forward policy; otherwise the default forward
//     policy. So with OpenWrt's defaults wan to lan traffic is REJECTed by
//     the defaults even though the wan zone's forward policy says DROP.
//   - Output: rules with no src (dest '*' or none), then rules with dest =
//     the outgoing zone, then that zone's output policy.
//
// In each chain the first matching rule wins. Within a rule an address or
// port list matches if the value is in one of its plain entries (when
// there are any) and in none of its negated ("!") ones. Ports are matched
// only for TCP and UDP packets and ICMP types only for ICMP ones, as fw4
// does for a rule naming several protocols. A rule's family is the one
// configured, or the one fw4 infers from its addresses, zones and ICMP
// types; a rule of one family does not match the other's packets.
//
// Connection state is not the firewall's job: the connection-tracking
// engine accepts packets of established and related connections before it
// asks the firewall, and drops invalid ones when drop_invalid is set, as
// fw4's chains do in their first rules. The firewall is asked about the
// first packet of a connection and about packets no connection accounts
// for. Sending the TCP reset or ICMP error for Reject is the caller's job.
//
// # Errors and warnings
//
// An invalid value, a reference to an unknown or disabled zone, a
// duplicate zone, a network in two zones, a redirect without dest_ip and
// an unknown option name are errors. fw4 only warns about unknown options
// and skips sections with invalid ones; gowrt refuses the whole
// configuration instead, since a misspelt option or a skipped rule changes
// what the firewall lets through without anyone noticing, and a router
// keeps running its previous rules until a corrected file loads.
//
// Options fw4 knows that gowrt does not implement fall in two groups.
// Those whose absence cannot let more traffic through than configured
// (logging, counters, kernel tunables such as tcp_syncookies, offloading,
// NAT reflection, masq6, the reject codes) are ignored and listed in
// Config.Warnings. Those that narrow what a section matches or change
// what it does are errors, because ignoring them would widen the rule.
//
// # Not supported
//
//   - IPv6 as a product feature: gowrt has no IPv6 yet. Rules and zones
//     carry a family and IPv6 addresses and ICMPv6 types are parsed and
//     matched, but the IPv6 rules of OpenWrt's defaults are left out and
//     masq6 is ignored.
//   - Zones by device or subnet (zone options device, subnet), negated
//     networks, and masq_src/masq_dest restrictions.
//   - Addresses given as network names, non-contiguous netmasks, and MAC
//     matches (src_mac).
//   - ipsets (ipset sections are ignored with a warning; the ipset option
//     is an error), includes (ignored with a warning), nat (SNAT) sections
//     and SNAT redirects.
//   - Rate limits (limit, limit_burst), time-based rules (start_date,
//     stop_date, start_time, stop_time, weekdays, monthdays), marks, DSCP,
//     conntrack helpers, and the targets NOTRACK, HELPER, MARK and DSCP.
//   - NAT reflection (redirects are not applied to LAN clients using the
//     WAN address), redirects to the router itself (a redirect needs
//     dest_ip), and DNAT to a port range other than the matched one.
//   - syn_flood is read into Defaults but enforced by whoever implements
//     it (the connection tracker), not by Ruleset.
package firewall
