//go:build !mips && !mipsle && !arm && !arm64

package barrier

import "sync/atomic"

// Host builds: a sequentially consistent atomic read-modify-write is a full
// fence for the Go memory model and, on amd64, a LOCKed instruction.
var fence atomic.Uint32

func full()   { fence.Add(1) }
func read()   { fence.Load() }
func write()  { fence.Add(1) }
func hazard() {}
