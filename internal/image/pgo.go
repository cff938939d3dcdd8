package image

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// profile is the CPU profile every image is built with (profile-guided
// optimization, `go build -pgo`): instruction samples of the firmware's
// hot paths on QEMU malta, merged from progs/natbench forwarding NATed and
// bridged frames (both byte orders) and progs/routertest's TCP upload and
// download. The compiler inlines the calls those paths make most (on
// mips32 Go passes arguments on the stack, so a call costs some 20
// instructions besides its work) and lays out their hot blocks first.
// scripts/pgo-profile.sh takes the profile again; do so after a change
// moves the hot paths, as a stale profile only optimises less.
//
//go:embed firmware.pgo
var profile []byte

// pgoFlag returns the go build flag that applies the firmware profile, or
// nothing if the caller chose a profile (any -pgo flag, -pgo=off
// included). The go command needs the profile as a file: it is written
// once under the user's cache directory (or the temporary one), named by
// its hash, so every build sees the same path and the go command's cache
// still hits.
func pgoFlag(goflags []string) ([]string, error) {
	for _, f := range goflags {
		if f == "-pgo" || f == "--pgo" || strings.HasPrefix(f, "-pgo=") || strings.HasPrefix(f, "--pgo=") {
			return nil, nil
		}
	}
	sum := sha256.Sum256(profile)
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	dir = filepath.Join(dir, "gowrt", "pgo")
	path := filepath.Join(dir, hex.EncodeToString(sum[:8])+".pgo")
	if _, err := os.Stat(path); err == nil {
		return []string{"-pgo=" + path}, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("firmware profile: %w", err)
	}
	// Written beside its final name and renamed: a concurrent build
	// never reads half a profile.
	tmp, err := os.CreateTemp(dir, "profile-*")
	if err != nil {
		return nil, fmt.Errorf("firmware profile: %w", err)
	}
	_, werr := tmp.Write(profile)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return nil, fmt.Errorf("firmware profile: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return nil, fmt.Errorf("firmware profile: %w", err)
	}
	return []string{"-pgo=" + path}, nil
}
