package sysupgrade_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gowrt/gowrt/sysupgrade"
)

func openssl(t *testing.T, args ...string) []byte {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command("openssl", args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("openssl %v: %v\n%s", args, err, stderr.Bytes())
	}
	return out
}

// TestKeysWithOpenSSL: the key files are the ones OpenSSL reads and
// writes, and an image's signature is the one OpenSSL computes over the
// signed header (Ed25519 is deterministic, RFC 8032 §5.1.6).
func TestKeysWithOpenSSL(t *testing.T) {
	dir := t.TempDir()
	pub, priv, err := sysupgrade.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	privPEM, err := sysupgrade.MarshalPrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	pubPEM, err := sysupgrade.MarshalPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	privFile, pubFile := filepath.Join(dir, "key.pem"), filepath.Join(dir, "pub.pem")
	os.WriteFile(privFile, privPEM, 0o600)
	os.WriteFile(pubFile, pubPEM, 0o644)
	if got := openssl(t, "pkey", "-in", privFile, "-pubout"); !bytes.Equal(got, pubPEM) {
		t.Fatalf("openssl derives\n%s\nwe wrote\n%s", got, pubPEM)
	}
	if got := openssl(t, "pkey", "-pubin", "-in", pubFile); !bytes.Equal(got, pubPEM) {
		t.Fatalf("openssl re-encodes the public key as\n%s", got)
	}

	img, err := sysupgrade.Sign(mkUImage(randBytes(7, 1000), "gowrt"), sysupgrade.Metadata{Board: board, Version: "2.0"}, priv)
	if err != nil {
		t.Fatal(err)
	}
	n := 12 + int(binary.BigEndian.Uint16(img[10:]))
	msgFile := filepath.Join(dir, "msg")
	os.WriteFile(msgFile, img[:n], 0o644)
	if sig := openssl(t, "pkeyutl", "-sign", "-rawin", "-inkey", privFile, "-in", msgFile); !bytes.Equal(sig, img[n:n+64]) {
		t.Fatalf("openssl signature % x\nimage's            % x", sig, img[n:n+64])
	}
	sigFile := filepath.Join(dir, "sig")
	os.WriteFile(sigFile, img[n:n+64], 0o644)
	openssl(t, "pkeyutl", "-verify", "-rawin", "-pubin", "-inkey", pubFile, "-in", msgFile, "-sigfile", sigFile)

	// A key made by OpenSSL signs images this package accepts.
	osslKey := filepath.Join(dir, "ossl.pem")
	openssl(t, "genpkey", "-algorithm", "ed25519", "-out", osslKey)
	b, _ := os.ReadFile(osslKey)
	priv2, err := sysupgrade.ParsePrivateKey(b)
	if err != nil {
		t.Fatal(err)
	}
	pub2, err := sysupgrade.ParsePublicKey(openssl(t, "pkey", "-in", osslKey, "-pubout"))
	if err != nil {
		t.Fatal(err)
	}
	img2, err := sysupgrade.Sign([]byte("fw"), sysupgrade.Metadata{Board: board, Version: "x"}, priv2)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := sysupgrade.Verify(img2, board, pub2); err != nil {
		t.Fatal(err)
	}
}

func TestParseKeyRefuses(t *testing.T) {
	pub, priv := testKey(3)
	privPEM, _ := sysupgrade.MarshalPrivateKey(priv)
	pubPEM, _ := sysupgrade.MarshalPublicKey(pub)
	if got, err := sysupgrade.ParsePrivateKey(privPEM); err != nil || !got.Equal(priv) {
		t.Fatalf("round trip: %v", err)
	}
	if got, err := sysupgrade.ParsePublicKey(pubPEM); err != nil || !got.Equal(pub) {
		t.Fatalf("round trip: %v", err)
	}
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ecDER, _ := x509.MarshalPKCS8PrivateKey(ec)
	ecPub, _ := x509.MarshalPKIXPublicKey(&ec.PublicKey)
	bad := [][]byte{
		nil, []byte("not pem"), pubPEM,
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte{0x30, 0x03, 1, 2, 3}}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: ecDER}),
	}
	for _, b := range bad {
		if _, err := sysupgrade.ParsePrivateKey(b); !errors.Is(err, sysupgrade.ErrKey) {
			t.Errorf("private %q: %v", b, err)
		}
	}
	for _, b := range [][]byte{nil, privPEM, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: ecPub})} {
		if _, err := sysupgrade.ParsePublicKey(b); !errors.Is(err, sysupgrade.ErrKey) {
			t.Errorf("public %q: %v", b, err)
		}
	}
}

// TestBuiltinKey: the link-time encoding round-trips; bad values are
// refused with sysupgrade.ErrKey; empty is no key.
func TestBuiltinKey(t *testing.T) {
	pub, _, err := sysupgrade.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	got, err := sysupgrade.ParseBuiltinKey(sysupgrade.BuiltinKey(pub))
	if err != nil || !got.Equal(pub) {
		t.Fatalf("round trip: %v", err)
	}
	if k, err := sysupgrade.ParseBuiltinKey(""); k != nil || err != nil {
		t.Fatalf("empty: %v %v", k, err)
	}
	for _, bad := range []string{"not base64!", "AAAA", sysupgrade.BuiltinKey(pub) + "AAAA"} {
		if _, err := sysupgrade.ParseBuiltinKey(bad); !errors.Is(err, sysupgrade.ErrKey) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
