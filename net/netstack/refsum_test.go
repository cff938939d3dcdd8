package netstack

import "github.com/gowrt/gowrt/net/inetsum/inetsumtest"

// refSum is the reference sum the tests check against.
var refSum = inetsumtest.Sum
