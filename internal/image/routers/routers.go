// Package routers adds the routers of board/ar71xx/boardfile to
// internal/image's Boards, one entry each (image.RouterBoard): importing
// it makes gowrt build -board tl-wdr4300 and the other routers known.
//
//	import _ "github.com/gowrt/gowrt/internal/image/routers"
//
// It is a package of its own because boardfile imports fwimage, whose
// tests build images with internal/image.
package routers

import (
	"fmt"

	"github.com/gowrt/gowrt/board/ar71xx/boardfile"
	"github.com/gowrt/gowrt/internal/image"
)

// Of returns the description of a router board, nil for other boards.
func Of(b image.Board) *boardfile.Board {
	if b.Package != image.RouterPackage {
		return nil
	}
	r, err := boardfile.Lookup(b.Name)
	if err != nil {
		return nil
	}
	return r
}

func init() {
	for _, r := range boardfile.All {
		image.Boards[r.Name] = image.RouterBoard(r.Name, fmt.Sprintf("%s, %s image (build only)", r.Model, r.Image.Format))
	}
}
