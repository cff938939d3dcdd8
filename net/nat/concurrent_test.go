package nat

import (
	"encoding/binary"
	"net/netip"
	"sync"
	"testing"
)

// TestConcurrentForward runs LAN receive, WAN receive, the stack's
// transmissions and hop-cache users at once (run it with -race). Each
// LAN goroutine owns its flows, so every reply must reach its host.
func TestConcurrentForward(t *testing.T) {
	tb, _ := newTable(t, Config{MaxConns: 2048}, homePolicy(1452)) // room for every flow: no eviction
	const workers, flows, rounds = 4, 40, 30
	var wg sync.WaitGroup
	errs := make(chan string, workers*2)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			host := netip.AddrFrom4([4]byte{192, 168, 1, byte(50 + w)})
			for r := 0; r < rounds; r++ {
				for f := 0; f < flows; f++ {
					port := uint16(10000 + f)
					q := udpPkt(ap(host, port), ap(remote, 53), 20)
					v := tb.Forward(q, lan)
					if v.Action != Forward {
						errs <- "LAN packet not forwarded: " + v.Reason.String()
						return
					}
					if !v.Hop().Valid {
						v.SetHop(Hop{Valid: true, Out: wan, Dst: [6]byte{byte(w)}})
					}
					if h := v.Hop(); h.Valid && h.Dst[0] != byte(w) {
						errs <- "hop of another flow"
						return
					}
					a := udpPkt(ap(remote, 53), ap(wanAddr, binary.BigEndian.Uint16(q[20:])), 20)
					v = tb.Forward(a, wan)
					if v.Action != Forward || dstOf(a) != host || dportOf(a) != port {
						errs <- "reply lost or misrouted"
						return
					}
				}
			}
		}(w)
	}
	wg.Add(1)
	go func() { // the router's own traffic and housekeeping
		defer wg.Done()
		for r := 0; r < rounds*flows; r++ {
			tb.Output(udpPkt(ap(wanAddr, uint16(r%500+1)), ap(remote, 123), 48), wan)
			if r%100 == 0 {
				tb.Sweep()
				for range tb.Conns {
				}
				_ = tb.Stats()
			}
		}
	}()
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}
