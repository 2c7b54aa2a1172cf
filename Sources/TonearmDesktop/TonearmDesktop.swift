// SPDX-License-Identifier: GPL-3.0-or-later
// `import TonearmDesktop`: the desktop integration, apart from the playback API of
// `import Tonearm` — a player published over MPRIS on the D-Bus session bus (MPRISService), with
// the Now Playing info and remote commands it publishes.
@_exported import TonearmMPRIS
@_exported import TonearmNowPlaying
