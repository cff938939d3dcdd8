package txq

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/gowrt/gowrt/ath/rate/sample"
)

// histLabels name the AggHist bins.
var histLabels = [len(Stats{}.AggHist)]string{"1", "2-3", "4-7", "8-15", "16-31", "32-63", "64"}

// WriteStats writes an athstats-style view of every station: the queue
// counters, the aggregate size histogram, and per rate the exchanges,
// subframes and acknowledgements with rate control's statistics for the
// station's current size bin (delivery ratio, airtime per byte).
func (s *Scheduler) WriteStats(w io.Writer) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	for _, st := range s.stations {
		c := &st.stats
		bin, cur := st.node.Current(s.cfgQueued(st))
		curName := "-"
		if cur >= 0 {
			curName = st.table.Rate(cur).String()
		}
		fmt.Fprintf(w, "station %s  rate %s (bin %d)  enqueued %d  acked %d  retries %d  dropped %d  bar %d  amsdu %d  full %d  hw-retries %d  errors %d  probes %d\n",
			st.addr, curName, bin, c.Enqueued, c.Acked, c.Retries, c.Dropped, c.BARs, c.AMSDUPacked, c.QueueFull, c.HWRetries, c.TxErrors, st.node.Probes)
		per := 0.0
		if c.Exchanges > 0 {
			per = float64(c.Subframes) / float64(c.Exchanges)
		}
		fmt.Fprintf(w, "  exchanges %d  subframes %d (%.1f per exchange)  sizes", c.Exchanges, c.Subframes, per)
		for i, n := range c.AggHist {
			fmt.Fprintf(w, " %s:%d", histLabels[i], n)
		}
		fmt.Fprintln(w)
		fmt.Fprintln(tw, "\trate\texchanges\tsubframes\tacked\tdelivery\tµs/byte\treports\t")
		for rix := 0; rix < st.table.Len(); rix++ {
			p := c.PerRate[rix]
			var a sample.ArmStats
			if bin >= 0 {
				a = st.node.Arm(bin, rix)
			}
			if p.Exchanges == 0 && a.Reports == 0 {
				continue
			}
			mark := ""
			if rix == cur {
				mark = "*"
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%.3f\t%.4f\t%d\t\n", mark, st.table.Rate(rix), p.Exchanges, p.Subframes, p.Acked, a.Delivery, a.CostUsPerB, a.Reports)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// cfgQueued is the queued bytes rate control's current arm is looked
// up for: a full aggregate, what a saturated station asks for.
func (s *Scheduler) cfgQueued(st *Station) int { return st.table.MaxAMPDU }
