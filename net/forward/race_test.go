//go:build race

package forward

// raceEnabled: the race detector makes sync.Pool drop a share of what is
// put back, so pooled buffers are allocated again and allocation counts
// are not meaningful.
const raceEnabled = true
