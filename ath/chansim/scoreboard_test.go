package chansim

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gowrt/gowrt/ath/airtime"
	"github.com/gowrt/gowrt/ath/rate"
	"github.com/gowrt/gowrt/ath/rate/minstrel"
	"github.com/gowrt/gowrt/ath/rate/sample"
)

// scoreTable is the link both algorithms run on: a 2x2 HT40 short-GI peer
// (MCS 0..15) in 5 GHz, 64 KiB A-MPDUs.
func scoreTable(t testing.TB) *rate.Table {
	caps := rate.Caps{MCS: 0xffff, HT40: true, SGI: true}
	tb, err := rate.NewTable(airtime.FiveGHz(), caps, caps)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

type row struct {
	name                               string
	sample, minstrel, fixed, genie     float64
	fixedName                          string
	sampleProbes, minProbes, anomalies uint64
	overlong                           uint64
}

func scoreboard(t *testing.T, scale float64, seeds []uint64) []row {
	tb := scoreTable(t)
	var rows []row
	for si, seed := range seeds {
		for i, sc := range Scenarios(scale, seed) {
			l, err := NewLink(sc, DefaultParams(), tb)
			if err != nil {
				t.Fatal(err)
			}
			s, err := sample.New(tb, sample.Config{})
			if err != nil {
				t.Fatal(err)
			}
			m, err := minstrel.New(tb, seed, false)
			if err != nil {
				t.Fatal(err)
			}
			rs := l.Run(s)
			rm := l.Run(m)
			best, genie := l.Oracles()
			if si == 0 {
				rows = append(rows, row{name: sc.Name, fixedName: best.Name})
			}
			r := &rows[i]
			n := float64(len(seeds))
			r.sample += rs.Mbps() / n
			r.minstrel += rm.Mbps() / n
			r.fixed += best.Mbps() / n
			r.genie += genie.Mbps() / n
			r.sampleProbes += rs.Probes
			r.minProbes += rm.Probes
			an := s.Anomalies()
			am := m.Anomalies()
			r.anomalies += an.Total() + am.Total()
			r.overlong += rs.Overlong + rm.Overlong
		}
	}
	return rows
}

func render(rows []row) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-22s %9s %11s %10s %9s %8s  %s\n", "scenario (Mb/s)", "sample", "minstrel_ht", "best-fixed", "genie", "s/fixed", "best fixed rate (1st seed)")
	var ss, sm float64
	for _, r := range rows {
		fmt.Fprintf(&b, "%-22s %9.1f %11.1f %10.1f %9.1f %7.1f%%  %s\n", r.name, r.sample, r.minstrel, r.fixed, r.genie, 100*r.sample/r.fixed, r.fixedName)
		ss += r.sample
		sm += r.minstrel
	}
	fmt.Fprintf(&b, "%-22s %9.1f %11.1f\n", "average", ss/float64(len(rows)), sm/float64(len(rows)))
	return b.String()
}

// check applies the acceptance rule.
func check(t *testing.T, rows []row) {
	var ss, sm float64
	for _, r := range rows {
		ss += r.sample
		sm += r.minstrel
		if strings.HasPrefix(r.name, "static") && r.sample < 0.95*r.fixed {
			t.Errorf("%s: sample %.1f Mb/s is below 95%% of the best fixed rate (%.1f)", r.name, r.sample, r.fixed)
		}
		if r.overlong != 0 {
			t.Errorf("%s: %d A-MPDUs went out longer than 4 ms", r.name, r.overlong)
		}
		if r.anomalies != 0 {
			t.Errorf("%s: %d completion anomalies from the simulator", r.name, r.anomalies)
		}
	}
	if ss < sm {
		t.Errorf("sample averages %.1f Mb/s, below minstrel_ht's %.1f", ss/float64(len(rows)), sm/float64(len(rows)))
	}
}

// TestScoreboard compares sample, minstrel_ht, the best fixed rate and the
// per-window genie on every scenario, and fails unless sample reaches 95 %
// of the best fixed rate on the static scenarios and at least minstrel_ht's
// goodput on average.
func TestScoreboard(t *testing.T) {
	rows := scoreboard(t, scoreScale, scoreSeeds)
	t.Logf("scale %.2f, seeds %v, 2x2 HT40 SGI, 5 GHz\n%s", scoreScale, scoreSeeds, render(rows))
	check(t, rows)
}
