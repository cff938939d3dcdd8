package sim_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/gowrt/gowrt/board/ar71xx/boardfile"
	"github.com/gowrt/gowrt/board/sim"
)

// logSink collects a twin's log lines for the test's end.
type logSink struct {
	mu    sync.Mutex
	lines []string
}

func (l *logSink) log(f string, a ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(f, a...))
}

func (l *logSink) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

// checkClean fails t if the models reported any misuse: hwsim's hazards
// (MACs, SoC) and the switch model's register-rule violations.
func checkClean(t *testing.T, tw *sim.Twin, logs *logSink) {
	t.Helper()
	if n := tw.Misuses(); n != 0 {
		t.Errorf("%d hardware misuses reported:\n%v", n, logs.all())
	}
	if tw.Switch != nil {
		if v := tw.Switch.Violations(); len(v) != 0 {
			t.Errorf("switch model violations:\n%v", v)
		}
	}
}

// TestTwinBringUp brings every board's twin up without cables: wire.Ports
// against the models, the router's ports as the description lists them,
// the switch's VLANs as programmed in the model's tables, no misuse.
func TestTwinBringUp(t *testing.T) {
	for _, b := range boardfile.All {
		t.Run(b.Name, func(t *testing.T) {
			logs := &logSink{}
			tw, err := sim.NewTwin(b, sim.TwinConfig{Seed: 5, Log: logs.log})
			if err != nil {
				t.Fatal(err)
			}
			defer tw.Close()
			ports, err := tw.Ports()
			if err != nil {
				t.Fatal(err)
			}
			if len(ports) != len(b.Ports) {
				t.Fatalf("%d ports, want %d", len(ports), len(b.Ports))
			}
			for i, p := range ports {
				if p.Name != b.Ports[i].Name || p.Role != b.Ports[i].Role || p.NIC == nil {
					t.Errorf("port %d: %+v, want %s %v", i, p, b.Ports[i].Name, b.Ports[i].Role)
				}
			}
			if b.Switch != nil && len(b.Switch.VLANs) > 0 {
				got := tw.Switch.VLANs()
				if len(got) != len(b.Switch.VLANs) {
					t.Fatalf("switch model VLANs %+v, want %+v", got, b.Switch.VLANs)
				}
				for i, v := range b.Switch.VLANs {
					var members, tagged uint32
					for _, p := range v.Ports {
						members |= 1 << p
					}
					for _, p := range v.Tagged {
						tagged |= 1 << p
					}
					g := got[i]
					if g.VID != int(v.VID) || g.Members != members || g.Tagged != tagged || g.Untagged != members&^tagged {
						t.Errorf("switch model VLAN %+v, want VID %d members %#x tagged %#x", g, v.VID, members, tagged)
					}
				}
			}
			if err := tw.Wired().Close(); err != nil {
				t.Fatal(err)
			}
			checkClean(t, tw, logs)
		})
	}
}
