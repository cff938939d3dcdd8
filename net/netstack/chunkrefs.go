package netstack

import (
	"reflect"
	"unsafe"

	"gvisor.dev/gvisor/pkg/atomicbitops"
	"gvisor.dev/gvisor/pkg/buffer"
)

// Whether a chunk the coalescer filled is still read by the stack.
//
// gVisor clears every chunk it hands out (buffer.newChunk), which on a
// bulk upload costs 0.41 instructions per byte received, a fifth of what
// the bytes themselves cost (copy and sum in, copy out to the reader).
// The coalescer can instead keep a view of each 64 KiB chunk it filled
// and write it again once every other view of it has been released: the
// stack has then read and dropped every byte in it, and nobody else can
// reach the chunk. Whether that is so is the chunk's reference count,
// which gVisor keeps unexported (View.sharesChunk reads it; nothing
// exported does), so chunkAlone reads it through the layout below. The
// layout is checked against gVisor's types once, by reflection; if a
// gVisor version lays them out otherwise, refsOK is false, chunks are
// never reused, and only the clearing comes back
// (TestChunkRefsLayout fails, so that an upgrade notices).
var chunkField, refsField, refsOK = chunkRefsLayout()

// chunkRefsLayout finds View.chunk's offset and, in the chunk, the
// offset of its reference count (an atomicbitops.Int64, read with its
// own Load, which finds the 64-bit word's place on 32-bit targets).
func chunkRefsLayout() (chunk, refs uintptr, ok bool) {
	f, found := reflect.TypeFor[buffer.View]().FieldByName("chunk")
	if !found || f.Type.Kind() != reflect.Pointer || f.Type.Elem().Kind() != reflect.Struct {
		return 0, 0, false
	}
	r, found := f.Type.Elem().FieldByName("refCount") // promoted from chunkRefs
	if !found || r.Type != reflect.TypeFor[atomicbitops.Int64]() {
		return 0, 0, false
	}
	// FieldByName's Offset of a promoted field is within its own
	// struct; the index path gives the outer offsets.
	var off uintptr
	t := f.Type.Elem()
	for _, i := range r.Index {
		sf := t.Field(i)
		off += sf.Offset
		t = sf.Type
	}
	return f.Offset, off, true
}

// chunkAlone reports whether v, a view the caller owns, is the only
// reference left to its chunk: the low 32 bits of gVisor's count are
// the real references, the high 32 the speculative ones (chunkRefs'
// TryIncRef), so exactly 1 means v and nothing else.
func chunkAlone(v *buffer.View) bool {
	if !refsOK {
		return false
	}
	c := *(*unsafe.Pointer)(unsafe.Add(unsafe.Pointer(v), chunkField))
	if c == nil {
		return false
	}
	return (*atomicbitops.Int64)(unsafe.Add(c, refsField)).Load() == 1
}
