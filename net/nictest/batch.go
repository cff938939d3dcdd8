package nictest

import (
	"testing"

	gnet "github.com/gowrt/gowrt/net"
)

// BatchCounter implements net.TxBatcher by counting, for test NICs that
// embed it: Open is the batches begun and not yet ended, Begun all those
// ever begun. It is not safe for concurrent use.
type BatchCounter struct{ Open, Begun int }

// TxBatchBegin implements net.TxBatcher.
func (c *BatchCounter) TxBatchBegin() { c.Open++; c.Begun++ }

// TxBatchEnd implements net.TxBatcher.
func (c *BatchCounter) TxBatchEnd() { c.Open-- }

var _ gnet.TxBatcher = (*BatchCounter)(nil)

// CheckBatchRelay checks that wrapper, a NIC over the one lower counts
// for, passes its transmit batches down: a batch begun on wrapper is open
// on lower until it ends there.
func CheckBatchRelay(t testing.TB, wrapper gnet.TxBatcher, lower *BatchCounter) {
	t.Helper()
	open, begun := lower.Open, lower.Begun
	wrapper.TxBatchBegin()
	if lower.Open != open+1 || lower.Begun != begun+1 {
		t.Fatalf("a batch begun above: %d open below (want %d), %d begun (want %d)", lower.Open, open+1, lower.Begun, begun+1)
	}
	wrapper.TxBatchEnd()
	if lower.Open != open {
		t.Fatalf("a batch ended above: %d open below, want %d", lower.Open, open)
	}
}
