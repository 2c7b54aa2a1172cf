// SPDX-License-Identifier: GPL-3.0-or-later
import CPulse
import TonearmCore

/// The PulseAudio channel map for a stream of `AudioFormat`: one `pa_channel_position_t` per
/// channel, from the format's ``AudioFormat/effectiveChannelLayout`` (the file's own layout, else
/// FFmpeg's default for the count), so that the server places and downmixes the channels by what
/// they are. A lone front-centre channel is PulseAudio's `mono`; a position PulseAudio has no
/// name for (wide, LFE2, bottom…), or one already taken, becomes the next `aux` channel. Past eight
/// channels without a layout: the WAVE_FORMAT_EXTENSIBLE order (FFmpeg's native order).
package enum PulseChannelMap {
    /// nil when PulseAudio cannot describe `channelCount` channels (more than `PA_CHANNELS_MAX`).
    package static func make(for format: AudioFormat) -> pa_channel_map? {
        let count = format.channelCount
        guard (1...Int(PA_CHANNELS_MAX)).contains(count) else { return nil }
        var map = pa_channel_map()
        guard let layout = format.effectiveChannelLayout else {
            return pa_channel_map_init_extend(&map, UInt32(count), PA_CHANNEL_MAP_WAVEEX) != nil ? map : nil
        }
        if layout == .mono {
            return pa_channel_map_init_mono(&map) != nil ? map : nil
        }
        var used = Set<Int32>()
        var aux = PA_CHANNEL_POSITION_AUX0.rawValue
        let positions: [pa_channel_position_t] = layout.positions.map { p in
            if let named = position(p), used.insert(named.rawValue).inserted { return named }
            defer { aux += 1 }
            return pa_channel_position_t(rawValue: aux)
        }
        guard aux <= PA_CHANNEL_POSITION_AUX31.rawValue + 1 else { return nil }
        map.channels = UInt8(count)
        withUnsafeMutableBytes(of: &map.map) { raw in
            let slots = raw.bindMemory(to: pa_channel_position_t.self)
            for (i, p) in positions.enumerated() { slots[i] = p }
        }
        return pa_channel_map_valid(&map) != 0 ? map : nil
    }

    /// PulseAudio's name for `p`, nil for positions it has none for.
    package static func position(_ p: AudioChannelPosition) -> pa_channel_position_t? {
        switch p {
        case .frontLeft, .stereoLeft: PA_CHANNEL_POSITION_FRONT_LEFT
        case .frontRight, .stereoRight: PA_CHANNEL_POSITION_FRONT_RIGHT
        case .frontCenter: PA_CHANNEL_POSITION_FRONT_CENTER
        case .lowFrequency: PA_CHANNEL_POSITION_LFE
        case .backLeft: PA_CHANNEL_POSITION_REAR_LEFT
        case .backRight: PA_CHANNEL_POSITION_REAR_RIGHT
        case .backCenter: PA_CHANNEL_POSITION_REAR_CENTER
        case .frontLeftOfCenter: PA_CHANNEL_POSITION_FRONT_LEFT_OF_CENTER
        case .frontRightOfCenter: PA_CHANNEL_POSITION_FRONT_RIGHT_OF_CENTER
        case .sideLeft: PA_CHANNEL_POSITION_SIDE_LEFT
        case .sideRight: PA_CHANNEL_POSITION_SIDE_RIGHT
        case .topCenter: PA_CHANNEL_POSITION_TOP_CENTER
        case .topFrontLeft: PA_CHANNEL_POSITION_TOP_FRONT_LEFT
        case .topFrontCenter: PA_CHANNEL_POSITION_TOP_FRONT_CENTER
        case .topFrontRight: PA_CHANNEL_POSITION_TOP_FRONT_RIGHT
        case .topBackLeft: PA_CHANNEL_POSITION_TOP_REAR_LEFT
        case .topBackCenter: PA_CHANNEL_POSITION_TOP_REAR_CENTER
        case .topBackRight: PA_CHANNEL_POSITION_TOP_REAR_RIGHT
        case .wideLeft, .wideRight, .surroundDirectLeft, .surroundDirectRight, .lowFrequency2,
             .topSideLeft, .topSideRight, .bottomFrontCenter, .bottomFrontLeft, .bottomFrontRight, .unknown: nil
        }
    }
}
