package sysupgrade

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
)

// Format constants (see the package documentation).
const (
	Magic         = "GOWRTUPG"
	FormatVersion = 1
	HeaderSize    = 12 // magic, version, metadata length
	SignatureSize = ed25519.SignatureSize

	MaxName = 64 // longest board name or version
	// MinMetadata and MaxMetadata bound the metadata length field.
	MinMetadata = 1 + 1 + 1 + 1 + 8 + sha256.Size
	MaxMetadata = 1 + MaxName + 1 + MaxName + 8 + sha256.Size
	// MaxFirmware bounds the firmware size: far above any NOR flash these
	// boards carry (16 MiB), small enough that sizes fit every int.
	MaxFirmware = 1 << 30
)

// Errors; the errors Verify and Apply return wrap one of these.
var (
	ErrTruncated = errors.New("sysupgrade: image truncated")
	ErrFormat    = errors.New("sysupgrade: not a valid upgrade image")
	ErrVersion   = errors.New("sysupgrade: unknown image format version")
	ErrSignature = errors.New("sysupgrade: bad signature")
	ErrBoard     = errors.New("sysupgrade: image is for another board")
	ErrHash      = errors.New("sysupgrade: firmware does not match its SHA-256")
	ErrKey       = errors.New("sysupgrade: bad key")
)

// TruncatedError reports an image shorter than it says it is.
type TruncatedError struct {
	Have, Need int64 // bytes in the image, bytes it needs
	What       string
}

func (e *TruncatedError) Error() string {
	return fmt.Sprintf("sysupgrade: image truncated: %d bytes, %s needs %d (%d bytes missing)", e.Have, e.What, e.Need, e.Need-e.Have)
}

// Missing is how many bytes are missing.
func (e *TruncatedError) Missing() int64 { return e.Need - e.Have }

// Is makes errors.Is(err, ErrTruncated) true.
func (e *TruncatedError) Is(target error) bool { return target == ErrTruncated }

// Metadata describes the firmware in an upgrade image.
type Metadata struct {
	Board   string   // board name the firmware is built for
	Version string   // firmware version, for display
	Size    int64    // firmware size in bytes
	SHA256  [32]byte // of the firmware
}

// validName accepts 1..MaxName printable ASCII bytes without spaces.
func validName(what, s string) error {
	if len(s) == 0 || len(s) > MaxName {
		return fmt.Errorf("%w: %s is %d bytes (want 1..%d)", ErrFormat, what, len(s), MaxName)
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return fmt.Errorf("%w: %s %q has byte %#02x (printable ASCII without spaces only)", ErrFormat, what, s, s[i])
		}
	}
	return nil
}

func (m *Metadata) marshal() ([]byte, error) {
	if err := validName("board name", m.Board); err != nil {
		return nil, err
	}
	if err := validName("version", m.Version); err != nil {
		return nil, err
	}
	b := make([]byte, 0, MaxMetadata)
	b = append(b, byte(len(m.Board)))
	b = append(b, m.Board...)
	b = append(b, byte(len(m.Version)))
	b = append(b, m.Version...)
	b = binary.BigEndian.AppendUint64(b, uint64(m.Size))
	b = append(b, m.SHA256[:]...)
	return b, nil
}

func parseMetadata(b []byte) (Metadata, error) {
	var m Metadata
	name := func(what string) (string, error) {
		if len(b) < 1 || len(b) < 1+int(b[0]) {
			return "", fmt.Errorf("%w: metadata ends inside the %s", ErrFormat, what)
		}
		s := string(b[1 : 1+int(b[0])])
		b = b[1+int(b[0]):]
		return s, validName(what, s)
	}
	var err error
	if m.Board, err = name("board name"); err != nil {
		return m, err
	}
	if m.Version, err = name("version"); err != nil {
		return m, err
	}
	if len(b) != 8+sha256.Size {
		return m, fmt.Errorf("%w: metadata has %d bytes after the names, want %d", ErrFormat, len(b), 8+sha256.Size)
	}
	size := binary.BigEndian.Uint64(b)
	if size == 0 || size > MaxFirmware {
		return m, fmt.Errorf("%w: firmware size %d (want 1..%d)", ErrFormat, size, MaxFirmware)
	}
	m.Size = int64(size)
	copy(m.SHA256[:], b[8:])
	return m, nil
}

// Sign builds an upgrade image of firmware: md's Board and Version are
// used, its Size and SHA256 are computed from firmware (values set by the
// caller are ignored).
func Sign(firmware []byte, md Metadata, priv ed25519.PrivateKey) ([]byte, error) {
	if len(priv) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("%w: private key is %d bytes, want %d", ErrKey, len(priv), ed25519.PrivateKeySize)
	}
	if len(firmware) == 0 || len(firmware) > MaxFirmware {
		return nil, fmt.Errorf("%w: firmware is %d bytes (want 1..%d)", ErrFormat, len(firmware), MaxFirmware)
	}
	md.Size = int64(len(firmware))
	md.SHA256 = sha256.Sum256(firmware)
	mb, err := md.marshal()
	if err != nil {
		return nil, err
	}
	img := make([]byte, 0, HeaderSize+len(mb)+SignatureSize+len(firmware))
	img = append(img, Magic...)
	img = binary.BigEndian.AppendUint16(img, FormatVersion)
	img = binary.BigEndian.AppendUint16(img, uint16(len(mb)))
	img = append(img, mb...)
	img = append(img, ed25519.Sign(priv, img)...)
	return append(img, firmware...), nil
}

// Verify checks img completely: format, signature by pub, board name,
// length and firmware SHA-256. It returns the metadata and the firmware,
// which is a sub-slice of img (nothing is copied).
func Verify(img []byte, board string, pub ed25519.PublicKey) (Metadata, []byte, error) {
	var md Metadata
	if len(pub) != ed25519.PublicKeySize {
		return md, nil, fmt.Errorf("%w: public key is %d bytes, want %d", ErrKey, len(pub), ed25519.PublicKeySize)
	}
	have := int64(len(img))
	if have < HeaderSize {
		return md, nil, &TruncatedError{have, HeaderSize, "the header"}
	}
	if string(img[:8]) != Magic {
		return md, nil, fmt.Errorf("%w: magic %q, want %q", ErrFormat, img[:8], Magic)
	}
	if v := binary.BigEndian.Uint16(img[8:]); v != FormatVersion {
		return md, nil, fmt.Errorf("%w: %d (this firmware reads version %d)", ErrVersion, v, FormatVersion)
	}
	mlen := int(binary.BigEndian.Uint16(img[10:]))
	if mlen < MinMetadata || mlen > MaxMetadata {
		return md, nil, fmt.Errorf("%w: metadata length %d (want %d..%d)", ErrFormat, mlen, MinMetadata, MaxMetadata)
	}
	signed := HeaderSize + mlen
	if need := int64(signed + SignatureSize); have < need {
		return md, nil, &TruncatedError{have, need, "the signed header"}
	}
	md, err := parseMetadata(img[HeaderSize:signed])
	if err != nil {
		return Metadata{}, nil, err
	}
	if !ed25519.Verify(pub, img[:signed], img[signed:signed+SignatureSize]) {
		return Metadata{}, nil, fmt.Errorf("%w: header not signed by this firmware's key", ErrSignature)
	}
	// From here on the metadata is authenticated.
	fwOff := int64(signed + SignatureSize)
	if need := fwOff + md.Size; have < need {
		return Metadata{}, nil, &TruncatedError{have, need, fmt.Sprintf("firmware %s of %d bytes", md.Version, md.Size)}
	} else if have > need {
		return Metadata{}, nil, fmt.Errorf("%w: %d bytes after the firmware's end", ErrFormat, have-need)
	}
	if md.Board != board {
		return Metadata{}, nil, fmt.Errorf("%w: image is for board %q, this is %q", ErrBoard, md.Board, board)
	}
	fw := img[fwOff:]
	if sha256.Sum256(fw) != md.SHA256 {
		return Metadata{}, nil, fmt.Errorf("%w (corrupted after signing)", ErrHash)
	}
	return md, fw, nil
}
