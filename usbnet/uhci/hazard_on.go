//go:build gowrt_hazard

package uhci

// hazards, in builds with -tags gowrt_hazard only (the hazard tests),
// holds the wrong-code hooks for mistakes that live inside the driver's
// own ordering, which a wrapped barrier.Space or busdma.Platform cannot
// inject:
//
//   - publishFirst: the first TD's control word (Active) stored before its
//     link, token and buffer;
//   - lengthFirst: the actual length taken from a load made before the
//     one that showed Active clear;
//   - noFrameWait: Cancel and Abort reuse TDs at once after unlinking,
//     without waiting for the frame number to advance;
//   - globalOrder: the completion pass stops at the first pipe whose head
//     transfer is still running, as if the controller retired transfers
//     across QHs in submission order;
//   - noRetoggle: after a short packet stops a bulk queue, the queued
//     transfers restart with the toggles predicted at submission;
//   - noErrLimit: TDs with an error counter of 0 (retry forever), so a
//     device that stops answering hangs its transfers.
type hazards struct {
	publish, length, frame, order, toggle, errLimit bool
}

func (h hazards) publishFirst() bool { return h.publish }
func (h hazards) lengthFirst() bool  { return h.length }
func (h hazards) noFrameWait() bool  { return h.frame }
func (h hazards) globalOrder() bool  { return h.order }
func (h hazards) noRetoggle() bool   { return h.toggle }
func (h hazards) noErrLimit() bool   { return h.errLimit }
