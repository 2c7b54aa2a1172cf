// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg
import Foundation
import TonearmCore

// The decoding loop of an ``FFmpegDecoder``: packets from its demuxer into its codec, each
// packet stamped from the packet index (indexed mode), canonical segments restarted at their
// boundaries, bad packets skipped and reported.
extension FFmpegDecoder {
    /// Decodes the next frame into `frame`; returns its sample timestamp (nil at the end of the stream).
    /// Bad packets are skipped and reported as warnings.
    func receiveFrameRaw() throws(TonearmError) -> Int64? {
        guard let fmt else { return nil }
        while true {
            // Re-read each time: a canonical segment boundary replaces the decoder.
            guard let cc = codecCtx else { return nil }
            if decoderEOF { return nil }
            let r = avcodec_receive_frame(cc, frame)
            if r == 0 {
                consecutiveErrors = 0
                var ts = frame.pointee.pts
                if ts == Self.nopts { ts = frame.pointee.best_effort_timestamp }
                if ts == Self.nopts { return startTs + pos + Int64(pending.count) }
                if !indexed { ts = toSamples(ts) }
                if ts < discardBefore { continue } // canonical preroll
                return ts
            }
            if r == Self.eof { decoderEOF = true; return nil }
            if r != Self.eagain {
                try noteError(r)
                continue
            }
            if inputEOF { decoderEOF = true; return nil }
            let rr = av_read_frame(fmt, packet)
            if rr < 0 {
                // A byte source that failed (a network source after its retries) is an error,
                // not the end of the stream.
                if let f = (io?.reader as? AVIOByteSourceReader)?.failure { throw f }
                inputEOF = true
                avcodec_send_packet(cc, nil)
                continue
            }
            defer { av_packet_unref(packet) }
            guard packet.pointee.stream_index == streamIndex else { continue }
            if packet.pointee.pts != Self.nopts && packet.pointee.duration > 0 {
                lastPacketEnd = max(lastPacketEnd, packet.pointee.pts + packet.pointee.duration)
            }
            if indexed {
                if nextPacket < 0 {
                    guard let k = index.identify(packet) else {
                        // Cannot place the packet: read from the start instead (always exact).
                        av_packet_unref(packet)
                        try positionAt(packet: 0)
                        codec.flush()
                        continue
                    }
                    nextPacket = k
                }
                guard nextPacket < index.count else { continue }
                let k = nextPacket
                nextPacket += 1
                if checkFirstPacket {
                    checkFirstPacket = false
                    if k > index.firstPacket(atOrAfter: skipBefore) {
                        // Landed past the preroll: read from the start, skipping up to it.
                        av_packet_unref(packet)
                        try positionAt(packet: 0)
                        continue
                    }
                }
                if index.timestamps[k] < skipBefore { continue }
                if segment >= 0 && index.timestamps[k] >= nextBoundary {
                    av_packet_unref(packet)
                    try startSegment(segmentOf(index.timestamps[k]))
                    continue
                }
                packetCounter = k
                index.stamp(packet, as: k)
            } else {
                if packetCounter >= 0 { packetCounter += 1 }
                if segmentSamples > 0 {
                    let p = packet.pointee.pts != Self.nopts ? packet.pointee.pts : packet.pointee.dts
                    if p != Self.nopts {
                        if checkFirstPacket {
                            checkFirstPacket = false
                            if p > segmentSeekTarget {
                                // Landed past the preroll: read from the start, skipping up to it.
                                av_packet_unref(packet)
                                try seekToFirstPacket()
                                continue
                            }
                        }
                        let ts = toSamples(p)
                        if ts < skipBefore { continue }
                        if segment >= 0 && ts >= nextBoundary {
                            av_packet_unref(packet)
                            try startSegment(segmentOf(ts))
                            continue
                        }
                    }
                }
            }
            let s = avcodec_send_packet(cc, packet)
            if s < 0 && s != Self.eagain { try noteError(s) }
        }
    }

    func noteError(_ code: Int32) throws(TonearmError) {
        consecutiveErrors += 1
        addWarning(.corruptPacket(path: name, packetIndex: max(0, packetCounter), framePosition: pos,
                                  detail: Self.errorString(code)))
        if consecutiveErrors > 500 {
            throw .decodeFailed(path: name, detail: "too many consecutive bad packets (\(Self.errorString(code)))")
        }
    }
}
