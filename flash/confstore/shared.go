package confstore

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// Shared lets several services keep one byte string each (a key) in one
// Store: the DHCP server its lease table, the clock the last known time.
// Each Key offers the Load/Save shape those services take
// (dhcpd.LeaseStore, clock.Store).
//
// A save rewrites the whole configuration, so it costs what Store.Save
// costs: one block erase and the programming of every key's records. Two
// things keep the erases down: a Save of the bytes a key already holds
// writes nothing, and a failed Save (ErrTooLarge, a flash error) is undone
// in memory, so one service's oversized value never stops the others'
// saves. Saves are written at once, not coalesced: the callers already
// save rarely (dhcpd on lease changes and every 30 minutes for renewals,
// the clock hourly), and a Save that returns nil is on flash — what a
// power cut a moment later leaves is what the caller was told.
//
// Values longer than MaxValue are split over several records: the key's
// own record holds the first MaxValue bytes, "name#1", "name#2" … the
// rest, so a value is bounded only by the slot (an erase block).
type Shared struct {
	mu sync.Mutex
	s  *Store
	v  Values

	saves, skipped, failures uint64
}

// Chunk records of a long value are named key + chunkSep + index.
const chunkSep = "#"

// maxChunkSuffix is the longest suffix a chunk record adds to its key:
// "#" and the index; a slot of 64 KiB holds fewer than 100 chunks of
// MaxValue bytes, and the check in Key allows for three digits.
const maxChunkSuffix = len(chunkSep) + 3

// Share returns a Shared over s, whose current configuration is v (what
// Open returned). Keys other than the ones handed out are kept as they are.
func Share(s *Store, v Values) *Shared {
	return &Shared{s: s, v: v.Clone()}
}

// SharedStats counts what Saves did.
type SharedStats struct {
	Saves    uint64 // writes to the flash that succeeded
	Skipped  uint64 // Saves of an unchanged value: nothing written
	Failures uint64 // Saves that returned an error (value kept as before)
}

// Stats returns the counters.
func (sh *Shared) Stats() SharedStats {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return SharedStats{Saves: sh.saves, Skipped: sh.skipped, Failures: sh.failures}
}

// Key is one service's value in a Shared store.
type Key struct {
	sh   *Shared
	name string
}

// ErrKeyName is returned by Shared.Key for a name it cannot use.
var ErrKeyName = errors.New("confstore: unusable key name")

// Key returns the value called name. The name follows CheckKey's rules,
// contains no '#' (chunk records use it) and leaves room for a chunk
// suffix within MaxKey.
func (sh *Shared) Key(name string) (*Key, error) {
	if err := CheckKey(name); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrKeyName, err)
	}
	if strings.Contains(name, chunkSep) || len(name)+maxChunkSuffix > MaxKey {
		return nil, fmt.Errorf("%w %q: contains %q or is longer than %d bytes", ErrKeyName, name, chunkSep, MaxKey-maxChunkSuffix)
	}
	return &Key{sh: sh, name: name}, nil
}

// Name returns the key's name.
func (k *Key) Name() string { return k.name }

func chunkName(name string, i int) string { return name + chunkSep + strconv.Itoa(i) }

// Load returns the saved value, or nil, nil if nothing was saved under
// the key. A chunk sequence with a gap (not something Save writes) is an
// error wrapping ErrFormat.
func (k *Key) Load() ([]byte, error) {
	k.sh.mu.Lock()
	defer k.sh.mu.Unlock()
	return k.sh.get(k.name)
}

func (sh *Shared) get(name string) ([]byte, error) {
	first, ok := sh.v[name]
	n := sh.chunks(name)
	if !ok {
		if n > 0 {
			return nil, fmt.Errorf("%w: %q has continuation records but no first record", ErrFormat, name)
		}
		return nil, nil
	}
	b := []byte(first)
	for i := 1; i <= n; i++ {
		c, ok := sh.v[chunkName(name, i)]
		if !ok {
			return nil, fmt.Errorf("%w: %q lacks record %d of %d", ErrFormat, name, i, n)
		}
		b = append(b, c...)
	}
	return b, nil
}

// chunks returns the highest continuation index present for name (0 if
// none).
func (sh *Shared) chunks(name string) int {
	n := 0
	prefix := name + chunkSep
	for key := range sh.v {
		if rest, ok := strings.CutPrefix(key, prefix); ok {
			if i, err := strconv.Atoi(rest); err == nil && i > n {
				n = i
			}
		}
	}
	return n
}

// Save replaces the key's value and writes the configuration to flash.
// If the value is what the key already holds, nothing is written. On an
// error the key keeps its previous value (in memory and on flash), and
// the other keys' later saves are unaffected.
func (k *Key) Save(b []byte) error {
	sh := k.sh
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if old, err := sh.get(k.name); err == nil && old != nil && bytes.Equal(old, b) {
		sh.skipped++
		return nil
	}
	next := sh.v.Clone()
	prefix := k.name + chunkSep
	for key := range next {
		if strings.HasPrefix(key, prefix) {
			delete(next, key)
		}
	}
	next[k.name] = string(b[:min(len(b), MaxValue)])
	for i, off := 1, MaxValue; off < len(b); i, off = i+1, off+MaxValue {
		next[chunkName(k.name, i)] = string(b[off:min(len(b), off+MaxValue)])
	}
	if err := sh.s.Save(next); err != nil {
		sh.failures++
		return fmt.Errorf("confstore: saving %q (%d bytes): %w", k.name, len(b), err)
	}
	sh.v = next
	sh.saves++
	return nil
}
