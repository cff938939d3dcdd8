package sysupgrade

import (
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"io"
)

// PEM block types: PKCS #8 (RFC 5208, RFC 8410 for Ed25519) and PKIX
// SubjectPublicKeyInfo (RFC 5280 §4.1, RFC 8410 §4), as OpenSSL writes
// them.
const (
	pemPrivate = "PRIVATE KEY"
	pemPublic  = "PUBLIC KEY"
)

// GenerateKey makes a signing key pair from rand (crypto/rand.Reader).
func GenerateKey(rand io.Reader) (ed25519.PublicKey, ed25519.PrivateKey, error) {
	return ed25519.GenerateKey(rand)
}

// MarshalPrivateKey encodes priv as a PEM "PRIVATE KEY" (PKCS #8) block.
func MarshalPrivateKey(priv ed25519.PrivateKey) ([]byte, error) {
	if len(priv) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("%w: private key is %d bytes, want %d", ErrKey, len(priv), ed25519.PrivateKeySize)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrKey, err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: pemPrivate, Bytes: der}), nil
}

// MarshalPublicKey encodes pub as a PEM "PUBLIC KEY" (PKIX) block.
func MarshalPublicKey(pub ed25519.PublicKey) ([]byte, error) {
	if len(pub) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("%w: public key is %d bytes, want %d", ErrKey, len(pub), ed25519.PublicKeySize)
	}
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrKey, err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: pemPublic, Bytes: der}), nil
}

func pemBlock(text []byte, typ string) ([]byte, error) {
	b, _ := pem.Decode(text)
	if b == nil {
		return nil, fmt.Errorf("%w: no PEM block", ErrKey)
	}
	if b.Type != typ {
		return nil, fmt.Errorf("%w: PEM block is %q, want %q", ErrKey, b.Type, typ)
	}
	return b.Bytes, nil
}

// ParsePrivateKey decodes the first PEM block of text: an Ed25519 PKCS #8
// "PRIVATE KEY".
func ParsePrivateKey(text []byte) (ed25519.PrivateKey, error) {
	der, err := pemBlock(text, pemPrivate)
	if err != nil {
		return nil, err
	}
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrKey, err)
	}
	priv, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%w: %T, want an Ed25519 key", ErrKey, k)
	}
	return priv, nil
}

// ParsePublicKey decodes the first PEM block of text: an Ed25519 PKIX
// "PUBLIC KEY".
func ParsePublicKey(text []byte) (ed25519.PublicKey, error) {
	der, err := pemBlock(text, pemPublic)
	if err != nil {
		return nil, err
	}
	k, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrKey, err)
	}
	pub, ok := k.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("%w: %T, want an Ed25519 key", ErrKey, k)
	}
	return pub, nil
}

// BuiltinKey encodes pub for a firmware's link-time key variable (gowrt
// build -sign passes it with -ldflags -X): standard base64, no newlines,
// which -X can carry.
func BuiltinKey(pub ed25519.PublicKey) string { return base64.StdEncoding.EncodeToString(pub) }

// ParseBuiltinKey decodes BuiltinKey's encoding; "" is no key (nil, nil).
func ParseBuiltinKey(s string) (ed25519.PublicKey, error) {
	if s == "" {
		return nil, nil
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("%w: built-in upgrade key %q is not a base64 ed25519 public key", ErrKey, s)
	}
	return ed25519.PublicKey(b), nil
}
