package board

import (
	"errors"
	"strings"
	"testing"
)

type fake string

func (f fake) Name() string           { return string(f) }
func (f fake) Ports() ([]Port, error) { return nil, nil }

func TestRegister(t *testing.T) {
	if _, err := Current(); !errors.Is(err, ErrNoBoard) {
		t.Fatalf("no board: %v", err)
	}
	Register(fake("one"))
	b, err := Current()
	if err != nil || b.Name() != "one" {
		t.Fatalf("Current: %v %v", b, err)
	}
	defer func() {
		r := recover()
		if s, _ := r.(string); !strings.Contains(s, `"one"`) || !strings.Contains(s, `"two"`) {
			t.Fatalf("second Register: panic %v", r)
		}
	}()
	Register(fake("two"))
}
