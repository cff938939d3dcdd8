package ar71xx

import "testing"

// The platform code cannot read the Info tables (package variables), so it
// repeats two of their facts as code: they must agree.
func TestPlatformFactsMatchInfo(t *testing.T) {
	for _, c := range chips {
		info, err := Identify(c.major)
		if err != nil {
			t.Fatal(err)
		}
		checkPlatformFacts(t, info)
	}
	info, _ := Identify(RevMajor71xx | 2)
	checkPlatformFacts(t, info)
}

func checkPlatformFacts(t *testing.T, info *Info) {
	t.Helper()
	if got := miscLatches(info.Family); got != info.NeedsAck() {
		t.Errorf("%s: miscLatches %v, Info.NeedsAck %v", info.Name, got, info.NeedsAck())
	}
	if got := resetModule(info.Family); got != info.ResetModule {
		t.Errorf("%s: resetModule %#x, Info.ResetModule %#x", info.Name, got, info.ResetModule)
	}
}
