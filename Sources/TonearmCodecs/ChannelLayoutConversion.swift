// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg
import TonearmCore

extension AudioChannelLayout {
    /// The positions of FFmpeg's `layout`, channel by channel (native or custom order); nil for
    /// a layout whose order is unspecified (a WAV without a channel mask) or ambisonic, and for
    /// one without channels. A channel FFmpeg names but Tonearm does not is ``AudioChannelPosition/unknown``.
    package init?(ffmpeg layout: AVChannelLayout) {
        var l = layout
        let count = Int(l.nb_channels)
        guard count > 0, l.order == AV_CHANNEL_ORDER_NATIVE || l.order == AV_CHANNEL_ORDER_CUSTOM else { return nil }
        var buf = [CChar](repeating: 0, count: 32)
        var positions: [AudioChannelPosition] = []
        positions.reserveCapacity(count)
        for i in 0..<count {
            let channel = av_channel_layout_channel_from_index(&l, UInt32(i))
            let named = channel.rawValue >= 0 && av_channel_name(&buf, 32, channel) >= 0
            positions.append(named ? AudioChannelPosition(rawValue: stringFromCBuffer(buf)) ?? .unknown : .unknown)
        }
        self.init(positions)
    }
}
