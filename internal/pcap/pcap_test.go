package pcap

import (
	"bytes"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestFileLayout(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, LinkTypeEthernet, 0)
	if err != nil {
		t.Fatal(err)
	}
	ts := time.Unix(1700000000, 123456000)
	if err := w.WritePacket(ts, []byte{0xaa, 0xbb}); err != nil {
		t.Fatal(err)
	}
	want := "d4c3b2a1" + "0200" + "0400" + "00000000" + "00000000" + "ffff0000" + "01000000" +
		"00f15365" + "40e20100" + "02000000" + "02000000" + "aabb"
	if got := hex.EncodeToString(buf.Bytes()); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if err := w.WritePacket(ts, make([]byte, 65536)); err != ErrTooLong {
		t.Fatalf("oversized packet: %v", err)
	}
}

// TestTsharkReads has tshark decode an Ethernet frame written here.
func TestTsharkReads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "eth.pcap")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWriter(f, LinkTypeEthernet, 0)
	if err != nil {
		t.Fatal(err)
	}
	frame, _ := hex.DecodeString("ffffffffffff" + "020000000001" + "0806" + strings.Repeat("00", 46))
	if err := w.WritePacket(time.Unix(1, 0), frame); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var stderr bytes.Buffer
	cmd := exec.Command("tshark", "-r", path, "-T", "fields", "-e", "eth.src", "-e", "eth.type")
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tshark: %v\n%s", err, stderr.Bytes())
	}
	if got := strings.TrimSpace(string(out)); got != "02:00:00:00:00:01\t0x0806" {
		t.Fatalf("tshark decoded %q", got)
	}
}

func TestWritePacketAllocs(t *testing.T) {
	var buf bytes.Buffer
	buf.Grow(1 << 20)
	w, _ := NewWriter(&buf, LinkTypeIEEE80211, 0)
	p := make([]byte, 100)
	ts := time.Unix(5, 0)
	if n := testing.AllocsPerRun(100, func() { w.WritePacket(ts, p) }); n != 0 {
		t.Fatalf("WritePacket allocates %v times", n)
	}
}
