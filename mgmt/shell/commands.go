package shell

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/netip"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

func standardCommands(sh *Shell) []Command {
	h := sh.host
	return []Command{
		{Name: "help", Usage: "help [COMMAND]", Help: "list the commands, or show one command's usage",
			Run: func(ctx context.Context, s *Session, args []string) error { return sh.helpText(s.Out, args) }},
		{Name: "echo", Usage: "echo [WORD...]", Help: "print the words",
			Run: func(ctx context.Context, s *Session, args []string) error {
				_, err := fmt.Fprintln(s.Out, strings.Join(args[1:], " "))
				return err
			}},
		{Name: "exit", Usage: "exit [STATUS]", Help: "leave the shell", Run: cmdExit},
		{Name: "ifconfig", Usage: "ifconfig [INTERFACE]", Help: "show network interfaces (addresses, counters)",
			Run: func(ctx context.Context, s *Session, args []string) error { return ifconfig(h, s.Out, args) }},
		{Name: "routes", Usage: "routes", Help: "show the routing table (as ip route)",
			Run: func(ctx context.Context, s *Session, args []string) error { return routes(h, s.Out) }},
		{Name: "ip", Usage: "ip route [show]", Help: "show the routing table",
			Run: func(ctx context.Context, s *Session, args []string) error {
				if len(args) < 2 || !isPrefixOf(args[1], "route") || (len(args) > 2 && !isPrefixOf(args[2], "show") && args[2] != "list") {
					return UsageError
				}
				return routes(h, s.Out)
			}},
		{Name: "ping", Usage: "ping [-c COUNT] [-s SIZE] [-W SECONDS] [-i SECONDS] HOST", Help: "send ICMP echo requests (^C stops)",
			Run: func(ctx context.Context, s *Session, args []string) error { return ping(ctx, h, s.Out, args) }},
		{Name: "etherswitch", Usage: "etherswitch", Help: "show the Ethernet switch: ports, VLANs, address table",
			Run: func(ctx context.Context, s *Session, args []string) error { return etherswitch(h, s.Out) }},
		{Name: "conntrack", Usage: "conntrack [-L]", Help: "list tracked connections",
			Run: func(ctx context.Context, s *Session, args []string) error { return conntrack(h, s.Out) }},
		{Name: "leases", Usage: "leases", Help: "list DHCP leases (as /tmp/dhcp.leases)",
			Run: func(ctx context.Context, s *Session, args []string) error { return leases(h, s.Out) }},
		{Name: "logread", Usage: "logread [-f] [-l N] [-e PATTERN] [-p SEVERITY] [-s SERVICE]", Help: "show the system log",
			Run: func(ctx context.Context, s *Session, args []string) error { return h.Logread(ctx, s.Out, args[1:]) }},
		{Name: "cfg", Usage: "cfg get KEY | set KEY=VALUE | unset KEY | add_list KEY=V | del_list KEY=V | show [PKG] | changes | commit | revert | export [PKG] | import | reset",
			Help: "read and change the configuration",
			Run:  func(ctx context.Context, s *Session, args []string) error { return h.Cfg(s.In, s.Out, args[1:]) }},
		{Name: "services", Usage: "services [start|stop|restart NAME]", Help: "list or control services",
			Run: func(ctx context.Context, s *Session, args []string) error { return h.Services(s.Out, args[1:]) }},
		{Name: "uptime", Usage: "uptime", Help: "show the time since boot",
			Run: func(ctx context.Context, s *Session, args []string) error { return uptime(h, s.Out, time.Now()) }},
		{Name: "free", Usage: "free", Help: "show memory in KiB",
			Run: func(ctx context.Context, s *Session, args []string) error { return free(h, s.Out) }},
		{Name: "top", Usage: "top", Help: "one screen of memory, goroutines and GC",
			Run: func(ctx context.Context, s *Session, args []string) error { return top(h, s.Out) }},
		{Name: "passwd", Usage: "passwd", Help: "set the administrator password",
			Run: func(ctx context.Context, s *Session, args []string) error { return passwd(h, s) }},
		{Name: "reboot", Usage: "reboot", Help: "restart the router",
			Run: func(ctx context.Context, s *Session, args []string) error {
				fmt.Fprintln(s.Out, "The system is going down NOW!")
				return h.Reboot()
			}},
	}
}

// isPrefixOf: ip accepts abbreviations ("ip r", "ip ro s").
func isPrefixOf(abbr, word string) bool { return abbr != "" && strings.HasPrefix(word, abbr) }

func cmdExit(ctx context.Context, s *Session, args []string) error {
	status := 0
	if len(args) > 1 {
		n, err := strconv.Atoi(args[1])
		if err != nil || n < 0 || n > 255 {
			return fmt.Errorf("%s: numeric argument 0-255 required", args[1])
		}
		status = n
	}
	return exitRequest{status}
}

// humanBytes formats like net-tools' ifconfig "(1.5 MiB)".
func humanBytes(n uint64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	f := float64(n)
	i := 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	return fmt.Sprintf("%.1f %s", f, units[i])
}

// ifconfig prints interfaces in the format of net-tools/BusyBox ifconfig
// (interface.c's ife_print): name padded to 10 columns, then indented
// detail lines.
func ifconfig(h Host, w io.Writer, args []string) error {
	ifs := h.Interfaces()
	if len(args) > 2 {
		return UsageError
	}
	found := false
	for _, ifc := range ifs {
		if len(args) == 2 && ifc.Name != args[1] {
			continue
		}
		found = true
		const indent = "          "
		fmt.Fprintf(w, "%-10sLink encap:Ethernet  HWaddr %s", ifc.Name, strings.ToUpper(ifc.MAC))
		if ifc.SpeedMbps > 0 {
			fmt.Fprintf(w, "  Speed:%dMb/s", ifc.SpeedMbps)
		}
		fmt.Fprintln(w)
		for _, p := range ifc.Addrs {
			if p.Addr().Is4() {
				fmt.Fprintf(w, "%sinet addr:%s  Bcast:%s  Mask:%s\n", indent, p.Addr(), broadcast(p), netmask(p))
			} else {
				fmt.Fprintf(w, "%sinet6 addr: %s Scope:%s\n", indent, p, scope6(p.Addr()))
			}
		}
		flags := "BROADCAST MULTICAST"
		if ifc.Up {
			flags = "UP BROADCAST RUNNING MULTICAST"
		}
		fmt.Fprintf(w, "%s%s  MTU:%d  Metric:1\n", indent, flags, ifc.MTU)
		fmt.Fprintf(w, "%sRX packets:%d errors:0 dropped:%d overruns:0 frame:0\n", indent, ifc.RxPackets, ifc.Drops)
		fmt.Fprintf(w, "%sTX packets:%d errors:0 dropped:0 overruns:0 carrier:0\n", indent, ifc.TxPackets)
		fmt.Fprintf(w, "%sRX bytes:%d (%s)  TX bytes:%d (%s)\n\n", indent, ifc.RxBytes, humanBytes(ifc.RxBytes), ifc.TxBytes, humanBytes(ifc.TxBytes))
	}
	if !found && len(args) == 2 {
		return fmt.Errorf("%s: error fetching interface information: Device not found", args[1])
	}
	return nil
}

func netmask(p netip.Prefix) netip.Addr {
	var m [4]byte
	bits := p.Bits()
	for i := range m {
		n := min(max(bits-8*i, 0), 8)
		m[i] = byte(0xff << (8 - n))
	}
	return netip.AddrFrom4(m)
}

func broadcast(p netip.Prefix) netip.Addr {
	a, m := p.Addr().As4(), netmask(p).As4()
	for i := range a {
		a[i] |= ^m[i]
	}
	return netip.AddrFrom4(a)
}

func scope6(a netip.Addr) string {
	switch {
	case a.IsLinkLocalUnicast():
		return "Link"
	case a.IsLoopback():
		return "Host"
	}
	return "Global"
}

// routes prints like iproute2's `ip route`: "default via GW dev IF" and
// "PREFIX dev IF".
func routes(h Host, w io.Writer) error {
	for _, r := range h.Routes() {
		dst := r.Dst.Masked().String()
		if r.Dst.Bits() == 0 {
			dst = "default"
		}
		fmt.Fprint(w, dst)
		if r.Gateway.IsValid() {
			fmt.Fprintf(w, " via %s", r.Gateway)
		}
		if r.Iface != "" {
			fmt.Fprintf(w, " dev %s", r.Iface)
		}
		fmt.Fprintln(w)
	}
	return nil
}

// Limits of ping's flags.
const (
	pingDefaultSize = 56    // iputils: 56 data bytes = 64 bytes of ICMP
	pingMaxSize     = 65507 // 65535 - 20 (IPv4 header) - 8 (ICMP header)
	pingMinInterval = 200 * time.Millisecond
	icmpHeader      = 8
	ipv4Header      = 20
	ipv6Header      = 40
)

// ping follows iputils' ping output: a PING header, one line per reply,
// nothing for a lost one, then the statistics. No reply at all: status 1.
func ping(ctx context.Context, h Host, w io.Writer, args []string) error {
	fs := flag.NewFlagSet("ping", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	count := fs.Int("c", 0, "")
	size := fs.Int("s", pingDefaultSize, "")
	waitSec := fs.Float64("W", 2, "")
	interval := fs.Float64("i", 1, "")
	if err := fs.Parse(args[1:]); err != nil {
		return fmt.Errorf("%v\nusage: ping [-c COUNT] [-s SIZE] [-W SECONDS] [-i SECONDS] HOST", err)
	}
	if fs.NArg() != 1 {
		return UsageError
	}
	switch {
	case *count < 0:
		return fmt.Errorf("invalid count: %d", *count)
	case *size < 0 || *size > pingMaxSize:
		return fmt.Errorf("invalid packet size: %d (0-%d)", *size, pingMaxSize)
	case !(*waitSec > 0 && *waitSec <= 3600):
		return fmt.Errorf("invalid timeout: %v", *waitSec)
	case !(*interval*float64(time.Second) >= float64(pingMinInterval) && *interval <= 3600):
		return fmt.Errorf("invalid interval: %v (at least %v)", *interval, pingMinInterval)
	}
	name := fs.Arg(0)
	dst, err := netip.ParseAddr(name)
	if err != nil {
		if dst, err = h.Resolve(ctx, name); err != nil {
			return fmt.Errorf("%s: %v", name, err)
		}
	}
	dst = dst.Unmap()
	hdr := ipv4Header
	if dst.Is6() {
		hdr = ipv6Header
	}
	fmt.Fprintf(w, "PING %s (%s) %d(%d) bytes of data.\n", name, dst, *size, *size+icmpHeader+hdr)
	wait := time.Duration(*waitSec * float64(time.Second))
	every := time.Duration(*interval * float64(time.Second))
	var (
		sent, received int
		sum, sum2      float64 // ms
		minRTT, maxRTT float64
		start          = time.Now()
		tick           = time.NewTimer(0)
	)
	defer tick.Stop()
	for seq := 1; *count == 0 || seq <= *count; seq++ {
		if seq > 1 {
			tick.Reset(every)
			select {
			case <-ctx.Done():
			case <-tick.C:
			}
		}
		if ctx.Err() != nil {
			break
		}
		pctx, cancel := context.WithTimeout(ctx, wait)
		rtt, err := h.Ping(pctx, dst, uint16(seq), *size)
		cancel()
		sent++
		switch {
		case err == nil:
			received++
			ms := float64(rtt) / float64(time.Millisecond)
			if received == 1 || ms < minRTT {
				minRTT = ms
			}
			maxRTT = max(maxRTT, ms)
			sum += ms
			sum2 += ms * ms
			fmt.Fprintf(w, "%d bytes from %s: icmp_seq=%d time=%s ms\n", *size+icmpHeader, dst, seq, rttString(ms))
		case ctx.Err() != nil:
			sent-- // interrupted, not lost
		case errors.Is(err, context.DeadlineExceeded):
			// lost: iputils prints nothing without -O
		default:
			fmt.Fprintf(w, "From %s icmp_seq=%d %v\n", dst, seq, err)
		}
	}
	elapsed := time.Since(start).Milliseconds()
	loss := 0
	if sent > 0 {
		loss = (sent - received) * 100 / sent
	}
	fmt.Fprintf(w, "\n--- %s ping statistics ---\n", name)
	fmt.Fprintf(w, "%d packets transmitted, %d received, %d%% packet loss, time %dms\n", sent, received, loss, elapsed)
	if received == 0 {
		return ExitStatus(1)
	}
	avg := sum / float64(received)
	mdev := math.Sqrt(max(sum2/float64(received)-avg*avg, 0))
	fmt.Fprintf(w, "rtt min/avg/max/mdev = %.3f/%.3f/%.3f/%.3f ms\n", minRTT, avg, maxRTT, mdev)
	return nil
}

// rttString: iputils prints three significant decimals for small times.
func rttString(ms float64) string {
	switch {
	case ms >= 100:
		return fmt.Sprintf("%.0f", ms)
	case ms >= 10:
		return fmt.Sprintf("%.1f", ms)
	case ms >= 1:
		return fmt.Sprintf("%.2f", ms)
	}
	return fmt.Sprintf("%.3f", ms)
}

// etherswitch prints like FreeBSD's etherswitchcfg(8): the switch, each
// port, each VLAN group, then the address table.
func etherswitch(h Host, w io.Writer) error {
	sw, ok := h.Switch()
	if !ok {
		return errors.New("no switch on this board")
	}
	fmt.Fprintf(w, "etherswitch0: %s, %d ports, %d VLAN groups\n", sw.Model, len(sw.Ports), len(sw.VLANs))
	for _, p := range sw.Ports {
		fmt.Fprintf(w, "port%d:", p.Port)
		if p.Name != "" {
			fmt.Fprintf(w, " (%s)", p.Name)
		}
		fmt.Fprintln(w)
		if p.Link {
			fmt.Fprintf(w, "\tmedia: Ethernet %dbaseT <full-duplex>\n\tstatus: active\n", p.SpeedMbps)
		} else {
			fmt.Fprint(w, "\tmedia: Ethernet autoselect\n\tstatus: no carrier\n")
		}
	}
	for i, v := range sw.VLANs {
		fmt.Fprintf(w, "vlangroup%d:\n\tvlan: %d\n\tmembers %s\n", i, v.ID, v.Ports)
	}
	if len(sw.ATU) > 0 {
		fmt.Fprintln(w, "atu:")
		for _, e := range sw.ATU {
			fmt.Fprintf(w, "\t%s port%d vlan %d\n", strings.ToLower(e.MAC), e.Port, e.VLAN)
		}
	}
	return nil
}

// protoNumbers are the IANA protocol numbers conntrack prints after the name.
var protoNumbers = map[string]int{"icmp": 1, "tcp": 6, "udp": 17, "icmpv6": 58}

// conntrack prints like conntrack-tools' `conntrack -L`: the original
// tuple, then the reply tuple (which shows the NAT).
func conntrack(h Host, w io.Writer) error {
	cs := h.Conntrack()
	for _, c := range cs {
		reply := c.Src
		if c.NATSrc.IsValid() {
			reply = c.NATSrc
		}
		fmt.Fprintf(w, "%-8s %d %d ", c.Proto, protoNumbers[c.Proto], int64(c.Timeout/time.Second))
		if c.State != "" {
			fmt.Fprintf(w, "%s ", c.State)
		}
		fmt.Fprintf(w, "src=%s dst=%s sport=%d dport=%d src=%s dst=%s sport=%d dport=%d\n",
			c.Src.Addr(), c.Dst.Addr(), c.Src.Port(), c.Dst.Port(),
			c.Dst.Addr(), reply.Addr(), c.Dst.Port(), reply.Port())
	}
	fmt.Fprintf(w, "conntrack: %d flow entries have been shown.\n", len(cs))
	return nil
}

// leases prints dnsmasq's lease file format (/tmp/dhcp.leases on OpenWrt,
// dnsmasq lease.c): "EXPIRY MAC IP HOSTNAME CLIENTID", 0 = never, "*" = none.
func leases(h Host, w io.Writer) error {
	for _, l := range h.Leases() {
		exp := int64(0)
		if !l.Expires.IsZero() {
			exp = l.Expires.Unix()
		}
		name := l.Hostname
		if name == "" {
			name = "*"
		}
		fmt.Fprintf(w, "%d %s %s %s *\n", exp, strings.ToLower(l.MAC), l.Addr, name)
	}
	return nil
}

// uptimeString is BusyBox uptime's "up 2 days,  3:04" / "up 5 min".
func uptimeString(d time.Duration) string {
	mins := int64(d / time.Minute)
	days, hours, m := mins/(24*60), mins/60%24, mins%60
	var b strings.Builder
	b.WriteString("up ")
	if days > 0 {
		fmt.Fprintf(&b, "%d day", days)
		if days != 1 {
			b.WriteByte('s')
		}
		b.WriteString(", ")
	}
	if hours > 0 {
		fmt.Fprintf(&b, "%2d:%02d", hours, m)
	} else {
		fmt.Fprintf(&b, "%d min", m)
	}
	return b.String()
}

// uptime prints like BusyBox: " HH:MM:SS up ..., load"; there is no load
// average, the CPU's busy share stands in.
func uptime(h Host, w io.Writer, now time.Time) error {
	info := h.Info()
	_, err := fmt.Fprintf(w, " %s %s,  busy: %.0f%%\n", now.Format("15:04:05"), uptimeString(info.Uptime), info.Busy*100)
	return err
}

// free prints like BusyBox free, in KiB.
func free(h Host, w io.Writer) error {
	info := h.Info()
	total, used := info.MemTotal>>10, info.MemUsed>>10
	freeKiB := total - min(used, total)
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "\ttotal\tused\tfree\tshared\tbuff/cache\tavailable\t\n")
	fmt.Fprintf(tw, "Mem:\t%d\t%d\t%d\t0\t0\t%d\t\n", total, used, freeKiB, freeKiB)
	fmt.Fprint(tw, "Swap:\t0\t0\t0\t\t\t\t\n")
	return tw.Flush()
}

// top prints one screen: the system, the Go heap, goroutines and the GC.
func top(h Host, w io.Writer) error {
	info := h.Info()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	kib := func(n uint64) uint64 { return n >> 10 }
	fmt.Fprintf(w, "%s %s %s, %s\n", info.Hostname, info.Board, info.Version, uptimeString(info.Uptime))
	fmt.Fprintf(w, "Mem: %dK used, %dK free, %dK total\n", kib(info.MemUsed), kib(info.MemTotal-min(info.MemUsed, info.MemTotal)), kib(info.MemTotal))
	fmt.Fprintf(w, "CPU: %.0f%% busy, %.0f%% idle\n", info.Busy*100, (1-info.Busy)*100)
	fmt.Fprintf(w, "Heap: %dK in use, %dK idle, %dK released, %dK allocated in %d objects\n",
		kib(ms.HeapInuse), kib(ms.HeapIdle), kib(ms.HeapReleased), kib(ms.HeapAlloc), ms.HeapObjects)
	fmt.Fprintf(w, "Go:   %dK from the system, %dK stacks, goroutines %d\n", kib(ms.Sys), kib(ms.StackInuse), runtime.NumGoroutine())
	last := time.Duration(ms.PauseNs[(ms.NumGC+255)%256])
	if ms.NumGC == 0 {
		last = 0
	}
	fmt.Fprintf(w, "GC:   %d cycles, last pause %v, total pause %v, next at %dK\n",
		ms.NumGC, last, time.Duration(ms.PauseTotalNs), kib(ms.NextGC))
	return nil
}

// passwd sets the administrator password: the new one twice; over SSH
// (and on a console whose Host cannot reset) the current password or the
// setup token first.
func passwd(h Host, s *Session) error {
	reset, canReset := h.(PasswordResetter)
	proof := ""
	if !s.Console || !canReset {
		p, err := readSecret(s, "Current password (or setup token): ")
		if err != nil {
			return err
		}
		proof = p
	}
	pw, err := readSecret(s, "New password: ")
	if err != nil {
		return err
	}
	again, err := readSecret(s, "Retype password: ")
	if err != nil {
		return err
	}
	if pw != again {
		return errors.New("passwords don't match")
	}
	if s.Console && canReset {
		err = reset.ResetPassword(pw)
	} else {
		err = h.SetPassword(proof, pw)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "passwd: password for %s changed\n", s.User)
	return nil
}

// wifiStatsCommand shows the Wi-Fi statistics under name (athstats is
// what FreeBSD's ath tool for this is called).
func wifiStatsCommand(name string, ws WifiStatser) Command {
	return Command{Name: name, Usage: name, Help: "show Wi-Fi rate control, aggregation and retry statistics per station",
		Run: func(ctx context.Context, s *Session, args []string) error {
			if len(args) > 1 {
				return UsageError
			}
			return ws.WifiStats(s.Out)
		}}
}
