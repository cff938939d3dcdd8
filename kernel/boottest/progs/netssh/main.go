// Command netssh is a router-sized boot-test program: it links net/http and
// golang.org/x/crypto/ssh (and with them the 32 MiB FIPS DRBG buffer in BSS),
// exercises both in-process, and reports the RAM the kernel says it uses.
// It must boot at -m 32, which only works if untouched BSS costs no RAM.
package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"

	"golang.org/x/crypto/ssh"

	_ "github.com/gowrt/gowrt/board/malta"
	"github.com/gowrt/gowrt/kernel"
)

func main() {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		fail("keygen", err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		fail("ssh signer", err)
	}
	sig, err := signer.Sign(rand.Reader, []byte("gowrt"))
	if err != nil {
		fail("ssh sign", err)
	}
	if err := signer.PublicKey().Verify([]byte("gowrt"), sig); err != nil {
		fail("ssh verify", err)
	}
	fmt.Println("ssh: host key", ssh.FingerprintSHA256(signer.PublicKey()))

	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello %s", r.URL.Query().Get("who"))
	})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/?who=router", nil))
	body, _ := io.ReadAll(rec.Result().Body)
	if string(body) != "hello router" {
		fail("http", fmt.Errorf("body %q", body))
	}
	fmt.Println("http:", rec.Code, string(body))

	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	in, err := kernel.ReadInfo()
	if err != nil {
		fail("info", err)
	}
	fmt.Printf("netssh: ram %d KiB total, %d KiB used, peak %d KiB; go sys %d KiB heap %d KiB\n",
		in.RAM>>10, in.RAMUsed>>10, in.RAMPeak>>10, ms.Sys>>10, ms.HeapSys>>10)
	fmt.Println("netssh: ok", strings.Repeat("=", 3))
}

func fail(what string, err error) {
	fmt.Println("netssh: FAIL", what+":", err)
	os.Exit(1)
}
