// Package mdio is the contract for IEEE 802.3 clause-22 management buses
// (MDIO/MDC): the bus a MAC exposes and PHY drivers and switch drivers use.
//
// The arge MAC implements Bus on its MII management registers; switch
// drivers (arswitch) reach their 32-bit registers through it by paging.
package mdio

import (
	"errors"
	"fmt"
)

// Clause-22 limits: 5-bit PHY and register addresses (IEEE 802.3 §22.2.4.5).
const (
	MaxPHY = 31
	MaxReg = 31
)

// Bus is a clause-22 management bus. Implementations serialise their own
// transactions; a caller that needs several transactions to be atomic (a
// switch's page write followed by a register access) holds a Lock.
type Bus interface {
	Read(phy, reg int) (uint16, error)
	Write(phy, reg int, val uint16) error
}

// Locker is implemented by buses that let a caller run a multi-transaction
// sequence without other users interleaving.
type Locker interface {
	Lock()
	Unlock()
}

// Errors common to all bus implementations.
var (
	ErrAddress = errors.New("mdio: PHY or register address out of range")
	ErrTimeout = errors.New("mdio: bus stayed busy")
)

// CheckAddr returns a wrapped ErrAddress unless phy and reg are valid
// clause-22 addresses.
func CheckAddr(phy, reg int) error {
	if phy < 0 || phy > MaxPHY || reg < 0 || reg > MaxReg {
		return fmt.Errorf("%w: phy %d reg %d", ErrAddress, phy, reg)
	}
	return nil
}
