// Package ath is the root of gowrt's Atheros 802.11n support. It holds no
// code of its own; the work is split into small packages:
//
//   - airtime: PPDU durations and frame-exchange costs (CCK, OFDM, HT).
//   - rate: rate tables, retry schedules and completion reports shared by
//     the rate-control algorithms.
//   - rate/sample: FreeBSD-style "sample" rate control, rebuilt for MCS
//     rates and A-MPDUs (expected airtime per delivered byte).
//   - rate/minstrel: Linux-style minstrel_ht, the baseline to beat.
//   - agg: A-MPDU and A-MSDU formation limits.
//   - chansim: a deterministic 802.11n link simulator, oracles and the
//     rate-control scoreboard.
//   - power: the driver-side refcounted force-awake of the MAC.
//   - athsim: a model of the MAC's power states that returns 0xdeadbeef for
//     register reads while the chip sleeps.
package ath
