// SPDX-License-Identifier: GPL-3.0-or-later
@_exported import TonearmCore
@_exported import TonearmCodecs
@_exported import TonearmDSP
@_exported import TonearmEngine
@_exported import TonearmOutput
@_exported import TonearmPlayback
@_exported import TonearmPlaylists
