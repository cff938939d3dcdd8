//go:build gowrt_ar71xx

package main

// gowrt build -board ROUTER (a board/ar71xx/boardfile router) builds with
// the gowrt_ar71xx tag: the router's own board, whose name gowrt links in.
import _ "github.com/gowrt/gowrt/board/ar71xx/router"
