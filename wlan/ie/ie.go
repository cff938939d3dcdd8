// Package ie parses and builds 802.11 information elements: the element
// walk with bounds checks, and the elements an access point sends and
// reads (SSID, rates, DS parameter set, TIM, RSN, HT and VHT capabilities
// and operation, WMM).
//
// Layouts follow IEEE 802.11-2016 9.4.2; WMM follows the Wi-Fi Alliance
// WMM specification (vendor-specific element, OUI 00:50:F2, type 2).
// Parsers never panic on malformed input: a truncated element, a count
// that overruns its element, a wrong fixed length or a duplicated element
// is an error. Parsed values alias the input where they are byte strings.
//
// Deriving the operating channel from HT/VHT Operation is not this
// package's job (see wlan/channel): parsing reports fields as sent.
package ie

import (
	"errors"
	"fmt"
)

// ID is an element ID (802.11-2016 Table 9-77).
type ID uint8

// Element IDs.
const (
	IDSSID            ID = 0
	IDSupportedRates  ID = 1
	IDDSParams        ID = 3
	IDTIM             ID = 5
	IDCountry         ID = 7
	IDChallengeText   ID = 16
	IDERP             ID = 42
	IDHTCapabilities  ID = 45
	IDRSN             ID = 48
	IDExtendedRates   ID = 50
	IDHTOperation     ID = 61
	IDExtCapabilities ID = 127
	IDVHTCapabilities ID = 191
	IDVHTOperation    ID = 192
	IDVendor          ID = 221
	IDExtension       ID = 255
)

const headerLen = 2

// Errors of element parsing.
var (
	ErrTruncated = errors.New("ie: element runs past the end of the frame")
	ErrLength    = errors.New("ie: element has the wrong length")
	ErrCount     = errors.New("ie: element's count exceeds its length")
	ErrTooMany   = errors.New("ie: element lists more entries than supported")
	ErrValue     = errors.New("ie: element has an invalid value")
)

// DuplicateError reports an element that may appear once but appeared twice.
type DuplicateError struct{ ID ID }

func (e *DuplicateError) Error() string { return fmt.Sprintf("ie: element %d appears twice", e.ID) }

// Element is one element; Body aliases the frame.
type Element struct {
	ID   ID
	Body []byte
}

// Iter walks the elements of a frame body.
type Iter struct {
	b   []byte
	err error
}

// NewIter returns an iterator over the elements in b.
func NewIter(b []byte) Iter { return Iter{b: b} }

// Next returns the next element, false at the end or on a truncated
// element (then Err is ErrTruncated).
func (it *Iter) Next() (Element, bool) {
	if it.err != nil || len(it.b) == 0 {
		return Element{}, false
	}
	if len(it.b) < headerLen || len(it.b) < headerLen+int(it.b[1]) {
		it.err = ErrTruncated
		return Element{}, false
	}
	n := headerLen + int(it.b[1])
	e := Element{ID: ID(it.b[0]), Body: it.b[headerLen:n:n]}
	it.b = it.b[n:]
	return e, true
}

// Err returns the error that stopped Next, nil at a clean end.
func (it *Iter) Err() error { return it.err }

// Elements holds the raw bodies of the elements an AP and station act on,
// found by Parse. A nil field means the element was absent (an empty SSID
// is a non-nil empty slice).
type Elements struct {
	SSID            []byte
	Rates           []byte
	ExtRates        []byte
	DSParams        []byte
	TIM             []byte
	RSN             []byte
	HTCapabilities  []byte
	HTOperation     []byte
	VHTCapabilities []byte
	VHTOperation    []byte
	WMM             []byte // the whole vendor element body, OUI included
}

// Parse walks b and collects the known elements. A truncated element or
// a known element appearing twice is an error; unknown elements are
// skipped.
func Parse(b []byte) (Elements, error) {
	var es Elements
	it := NewIter(b)
	for {
		e, ok := it.Next()
		if !ok {
			break
		}
		var slot *[]byte
		switch e.ID {
		case IDSSID:
			slot = &es.SSID
		case IDSupportedRates:
			slot = &es.Rates
		case IDExtendedRates:
			slot = &es.ExtRates
		case IDDSParams:
			slot = &es.DSParams
		case IDTIM:
			slot = &es.TIM
		case IDRSN:
			slot = &es.RSN
		case IDHTCapabilities:
			slot = &es.HTCapabilities
		case IDHTOperation:
			slot = &es.HTOperation
		case IDVHTCapabilities:
			slot = &es.VHTCapabilities
		case IDVHTOperation:
			slot = &es.VHTOperation
		case IDVendor:
			if isWMM(e.Body) {
				slot = &es.WMM
			}
		}
		if slot == nil {
			continue
		}
		if *slot != nil {
			return es, &DuplicateError{ID: e.ID}
		}
		*slot = e.Body
	}
	return es, it.Err()
}

// appendHeader appends an element header; n must be at most 255.
func appendHeader(dst []byte, id ID, n int) []byte {
	return append(dst, byte(id), byte(n))
}

// MaxSSIDLen is the longest SSID (802.11-2016 9.4.2.2).
const MaxSSIDLen = 32

// ParseSSID checks an SSID element body.
func ParseSSID(body []byte) ([]byte, error) {
	if len(body) > MaxSSIDLen {
		return nil, ErrLength
	}
	return body, nil
}

// AppendSSID appends an SSID element; an SSID longer than 32 bytes is cut.
// A hidden network's beacon carries an empty one.
func AppendSSID(dst []byte, ssid []byte) []byte {
	if len(ssid) > MaxSSIDLen {
		ssid = ssid[:MaxSSIDLen]
	}
	dst = appendHeader(dst, IDSSID, len(ssid))
	return append(dst, ssid...)
}

// Rates are in units of 500 kb/s with bit 7 marking a basic rate
// (802.11-2016 9.4.2.3); the Supported Rates element holds at most 8, the
// rest go into Extended Supported Rates (9.4.2.13).
const (
	RateBasic       = 0x80
	maxSupportedLen = 8
)

// AppendRates appends Supported Rates with the first 8 rates and, when
// there are more, Extended Supported Rates with up to 255 of the rest.
func AppendRates(dst []byte, rates []byte) []byte {
	n := min(len(rates), maxSupportedLen)
	dst = appendHeader(dst, IDSupportedRates, n)
	dst = append(dst, rates[:n]...)
	if rest := rates[n:]; len(rest) > 0 {
		rest = rest[:min(len(rest), 255)]
		dst = appendHeader(dst, IDExtendedRates, len(rest))
		dst = append(dst, rest...)
	}
	return dst
}

// ParseRates checks a Supported Rates (ext false) or Extended Supported
// Rates body.
func ParseRates(body []byte, ext bool) ([]byte, error) {
	if len(body) == 0 || (!ext && len(body) > maxSupportedLen) {
		return nil, ErrLength
	}
	return body, nil
}

// ParseDSParams returns the current channel of a DS Parameter Set body
// (802.11-2016 9.4.2.4).
func ParseDSParams(body []byte) (uint8, error) {
	if len(body) != 1 {
		return 0, ErrLength
	}
	return body[0], nil
}

// AppendDSParams appends a DS Parameter Set element.
func AppendDSParams(dst []byte, channel uint8) []byte {
	return append(appendHeader(dst, IDDSParams, 1), channel)
}
