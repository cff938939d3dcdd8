// Command nosoc links the kernel without a board or SoC package, which no
// firmware should do: TestNoSoCLinkError checks that it fails to link and
// that the linker names the missing platform hooks.
package main

import _ "github.com/gowrt/gowrt/kernel"

func main() {}
