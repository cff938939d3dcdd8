package main

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/gowrt/gowrt/sysupgrade"
)

// keygen makes the ed25519 key pair that signs sysupgrade images: FILE
// gets the private key (PKCS#8 PEM, mode 0600, never overwritten) and
// FILE.pub the public key (PKIX PEM) that the firmware keeps to check
// upgrades.
func keygen(args []string, stderr io.Writer) error {
	fs := newFlags("keygen")
	out := fs.String("o", "", "")
	if err := fs.Parse(args); err != nil {
		return usagef("keygen: %v", err)
	}
	if *out == "" || fs.NArg() != 0 {
		return usagef("keygen: want -o FILE and nothing else")
	}
	pub, priv, err := sysupgrade.GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	privPEM, err := sysupgrade.MarshalPrivateKey(priv)
	if err != nil {
		return err
	}
	pubPEM, err := sysupgrade.MarshalPublicKey(pub)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(*out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("keygen: %s exists; a signing key is never overwritten", *out)
	}
	if err != nil {
		return err
	}
	if _, err := f.Write(privPEM); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.WriteFile(*out+".pub", pubPEM, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "gowrt: signing key %s (keep it secret), public key %s.pub (goes into the firmware)\n", *out, *out)
	return nil
}
