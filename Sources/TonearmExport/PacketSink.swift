// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg
import TonearmCore

/// Where an export's encoded packets go: an FFmpeg muxer, or Tonearm's own CAF writer for AAC.
enum PacketSink {
    case muxer(MuxerOutput)
    case caf(CAFAACWriter)

    /// The time base packets must be in when written.
    func timeBase(rate: Int32) -> AVRational {
        switch self {
        case .muxer(let m): m.stream.pointee.time_base
        case .caf: AVRational(num: 1, den: rate)
        }
    }

    func write(_ packet: UnsafeMutablePointer<AVPacket>) throws(TonearmError) {
        switch self {
        case .muxer(let m): try m.write(packet)
        case .caf(let c): try c.write(packet.pointee.data, count: Int(packet.pointee.size))
        }
    }

    /// Ends the file. `priming` and `validFrames` (the encoder delay and the real length, in
    /// frames) matter to CAF's packet table only; muxers take them from the packets.
    func finish(priming: Int64, validFrames: Int64?) throws(TonearmError) {
        switch self {
        case .muxer(let m): try m.finish()
        case .caf(let c): try c.finish(priming: priming, validFrames: validFrames)
        }
    }
}
