// SPDX-License-Identifier: GPL-3.0-or-later
// `import Tonearm`: the playback API. The desktop integration (MPRIS on the session bus) is the
// TonearmDesktop product, which programs that publish a player import as well.
@_exported import TonearmCore
@_exported import TonearmCodecs
@_exported import TonearmDSP
@_exported import TonearmEngine
@_exported import TonearmRender
@_exported import TonearmOutput
@_exported import TonearmPlayback
@_exported import TonearmPlaylists
@_exported import TonearmNowPlaying
@_exported import TonearmSession
@_exported import TonearmNetwork
@_exported import TonearmLibrary
@_exported import TonearmExport
@_exported import TonearmRecord
@_exported import TonearmVideo
