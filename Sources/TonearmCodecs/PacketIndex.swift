// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg

/// The packets of one audio stream, read once at open (demuxed, not decoded), for containers
/// whose own timestamps are not exact after a seek (MP3, ADTS, Ogg, Matroska/WebM, …): each
/// packet's byte position, its exact timestamp in samples (the summed durations of the packets
/// before it), the demuxer's own timestamp, its size, a hash of its ends and its skip/discard
/// side data. ``FFmpegDecoder`` finds where to seek from it and gives every packet it reads
/// the timestamp and side data recorded here, so that decoding after a seek is a straight decode.
struct PacketIndex {
    /// Byte positions (-1 where the demuxer does not say).
    private(set) var positions: [Int64] = []
    /// Sample timestamps, with one more entry at the end: the timestamp after the last packet.
    private(set) var timestamps: [Int64] = []
    /// The demuxer's timestamps (pts, else dts; stream time base).
    private(set) var demuxerTimestamps: [Int64] = []
    private(set) var sizes: [Int32] = []
    private(set) var hashes: [UInt32] = []
    /// `AV_PKT_DATA_SKIP_SAMPLES` side data, for the packets that have any.
    private(set) var skipSamples: [Int: (skip: UInt32, discard: UInt32)] = [:]

    private static let nopts = tonearm_av_nopts_value()

    /// Packets in the index.
    var count: Int { positions.count }

    /// Records `packet` at sample timestamp `timestamp`. `hashed`: whether its hash tells it
    /// apart after a seek (byte seeks land on known packets and need none).
    mutating func append(_ packet: UnsafeMutablePointer<AVPacket>, timestamp: Int64, hashed: Bool) {
        let i = timestamps.count
        positions.append(packet.pointee.pos)
        timestamps.append(timestamp)
        demuxerTimestamps.append(packet.pointee.pts != Self.nopts ? packet.pointee.pts : packet.pointee.dts)
        sizes.append(packet.pointee.size)
        hashes.append(hashed ? Self.hash(packet) : 0)
        var sideSize = 0
        if let side = av_packet_get_side_data(packet, AV_PKT_DATA_SKIP_SAMPLES, &sideSize), sideSize >= 10 {
            let skip = UInt32(side[0]) | UInt32(side[1]) << 8 | UInt32(side[2]) << 16 | UInt32(side[3]) << 24
            let discard = UInt32(side[4]) | UInt32(side[5]) << 8 | UInt32(side[6]) << 16 | UInt32(side[7]) << 24
            if skip != 0 || discard != 0 { skipSamples[i] = (skip, discard) }
        }
    }

    /// Ends the index: `end` is the timestamp after the last packet.
    mutating func finish(end: Int64) {
        timestamps.append(end)
    }

    /// The first packet whose timestamp is ≥ `ts` (``count`` if none).
    func firstPacket(atOrAfter ts: Int64) -> Int {
        var lo = 0, hi = count
        while lo < hi { let mid = (lo + hi) / 2; if timestamps[mid] < ts { lo = mid + 1 } else { hi = mid } }
        return lo
    }

    /// The last packet whose timestamp is ≤ `ts` (0 when `ts` is before the first).
    func packet(containing ts: Int64) -> Int {
        var lo = 0, hi = count - 1
        if ts <= timestamps[0] { return 0 }
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if timestamps[mid] <= ts { lo = mid } else { hi = mid - 1 }
        }
        return lo
    }

    /// Which entry `p`, just read after a seek, is: by byte position, size and hash, else by the
    /// demuxer's timestamp and hash; nil when it matches none.
    func identify(_ p: UnsafeMutablePointer<AVPacket>) -> Int? {
        let pos = p.pointee.pos
        let pts = p.pointee.pts != Self.nopts ? p.pointee.pts : p.pointee.dts
        if pos >= 0 {
            // First entry with this byte position.
            var lo = 0, hi = count
            while lo < hi { let mid = (lo + hi) / 2; if positions[mid] < pos { lo = mid + 1 } else { hi = mid } }
            var candidates: [Int] = []
            var i = lo
            while i < count && positions[i] == pos { candidates.append(i); i += 1 }
            let h = Self.hash(p)
            if let c = candidates.first(where: { sizes[$0] == p.pointee.size && hashes[$0] == h }) { return c }
        }
        if pts != Self.nopts, let k = demuxerTimestamps.firstIndex(of: pts), hashes[k] == Self.hash(p) { return k }
        return nil
    }

    /// Gives `packet`, read as entry `k`, the timestamp, duration (in samples) and skip/discard
    /// side data the index holds for it.
    func stamp(_ packet: UnsafeMutablePointer<AVPacket>, as k: Int) {
        packet.pointee.pts = timestamps[k]
        packet.pointee.dts = timestamps[k]
        packet.pointee.duration = timestamps[k + 1] - timestamps[k]
        av_packet_free_side_data(packet)
        if let side = skipSamples[k], let d = av_packet_new_side_data(packet, AV_PKT_DATA_SKIP_SAMPLES, 10) {
            for b in 0..<4 {
                d[b] = UInt8(truncatingIfNeeded: side.skip >> (8 * UInt32(b)))
                d[4 + b] = UInt8(truncatingIfNeeded: side.discard >> (8 * UInt32(b)))
            }
            d[8] = 0; d[9] = 0
        }
    }

    /// FNV-1a over a packet's first and last 128 bytes (tells apart packets sharing a byte
    /// position, as in Ogg pages; the ends differ as surely as the whole and cost far less).
    static func hash(_ p: UnsafeMutablePointer<AVPacket>) -> UInt32 {
        guard let d = p.pointee.data else { return 0 }
        let size = Int(p.pointee.size)
        var h: UInt32 = 2166136261
        for i in 0..<min(size, 128) { h = (h ^ UInt32(d[i])) &* 16777619 }
        for i in max(128, size - 128)..<max(128, size) { h = (h ^ UInt32(d[i])) &* 16777619 }
        return h
    }
}
