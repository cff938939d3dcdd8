// Package cdcecm drives USB Ethernet functions of the Communications
// Device Class's Ethernet Networking Control Model (USB CDC 1.2 and its
// ECM120 subclass specification): QEMU's usb-net in its CDC
// configuration, Linux's g_ether/g_cdc gadgets, many cable modems and
// phones. Frames travel raw on a pair of bulk endpoints of the data
// interface; the control interface's functional descriptors name the
// data interface and the MAC address string, and its interrupt endpoint
// reports the connection. The Ethernet side is the usbnet framework's NIC.
package cdcecm
