// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg
import Foundation
import TonearmCore

// The positioning of an ``FFmpegDecoder``: exact seeks with a preroll for the codec, the raw
// positioning of the demuxer (by packet index, byte or timestamp) and the canonical segments of
// the codecs whose state a seek cannot rebuild (see ``FFmpegDecoder``).
extension FFmpegDecoder {
    // MARK: Canonical segments

    /// Segment length and preroll for the codecs decoded canonically.
    func configureSegments() {
        let frameSize = Int64(stream.pointee.codecpar.pointee.frame_size > 0 ? stream.pointee.codecpar.pointee.frame_size : 1024)
        switch codecID {
        case AV_CODEC_ID_AAC:
            // Without PNS the decoder's only memory is the MDCT overlap (one frame) and the
            // previous window shape: two packets of preroll give the bits of a continuous decode.
            segmentSamples = 256 * frameSize
            segmentPreroll = 2 * frameSize
        case AV_CODEC_ID_OPUS where sawSILK || !indexed:
            // Two seconds bring SILK's float state within about 1e-5 of a continuous decode
            // (CELT's energy predictions converge to the same bits); 20 s segments keep that
            // preroll at a tenth of the decoding work.
            segmentSamples = 20 * Int64(sampleRate)
            segmentPreroll = 2 * Int64(sampleRate)
        default:
            return
        }
        segmentBase = indexed ? index.timestamps[0] : toSamples(firstDts)
    }

    /// The segment holding raw timestamp `ts`.
    func segmentOf(_ ts: Int64) -> Int {
        ts < segmentBase + segmentSamples ? 0 : Int((ts - segmentBase) / segmentSamples)
    }

    /// Starts decoding segment `s` canonically: a fresh decoder, positioned `segmentPreroll`
    /// before the segment's first packet, whose output before the segment is discarded.
    func startSegment(_ s: Int) throws(TonearmError) {
        if s == 0 { try rewind(); return }
        resetDecoder()
        let r = codec.open()
        if r < 0 { throw .decodeFailed(path: name, detail: "cannot reopen the decoder (\(Self.errorString(r)))") }
        let start = segmentBase + Int64(s) * segmentSamples
        segment = s
        nextBoundary = start + segmentSamples
        discardBefore = start
        skipBefore = start - segmentPreroll
        checkFirstPacket = true
        if indexed {
            try positionAt(packet: index.firstPacket(atOrAfter: skipBefore))
        } else {
            segmentSeekTarget = fromSamples(skipBefore) - 1
            if av_seek_frame(fmt, streamIndex, segmentSeekTarget, AVSEEK_FLAG_BACKWARD) < 0 { try seekToFirstPacket() }
            packetCounter = -1
        }
    }

    /// Trusted mode: positions the demuxer at the first audio packet.
    func seekToFirstPacket() throws(TonearmError) {
        var r = av_seek_frame(fmt, streamIndex, firstDts, AVSEEK_FLAG_BACKWARD)
        if r < 0 { r = avformat_seek_file(fmt, streamIndex, .min, .min, .max, 0) }
        if r < 0 { r = av_seek_frame(fmt, -1, 0, AVSEEK_FLAG_BYTE) }
        if r < 0 { throw .decodeFailed(path: name, detail: "cannot seek to the start (\(Self.errorString(r)))") }
        segmentSeekTarget = .max
    }

    // MARK: Positioning (raw, before trimming)

    func resetDecoder() {
        codec.flush()
        segment = -1
        nextBoundary = .max
        skipBefore = .min
        discardBefore = .min
        checkFirstPacket = false
        inputEOF = false
        decoderEOF = false
        pending.clear()
    }

    /// Positions the demuxer at the first packet, with a fresh decoder.
    func rewind() throws(TonearmError) {
        resetDecoder()
        let r = codec.open()
        if r < 0 { throw .decodeFailed(path: name, detail: "cannot reopen the decoder (\(Self.errorString(r)))") }
        if indexed {
            try positionAt(packet: 0)
        } else {
            try seekToFirstPacket()
            packetCounter = 0
        }
        if segmentSamples > 0 {
            segment = 0
            nextBoundary = segmentBase + segmentSamples
        }
    }

    /// Indexed mode: positions the demuxer so that the next audio packet is `k` (or one before it).
    func positionAt(packet k: Int) throws(TonearmError) {
        var r: Int32
        if byteSeek || k == 0 && index.positions[0] >= 0 && byteSeek {
            r = av_seek_frame(fmt, streamIndex, index.positions[k], AVSEEK_FLAG_BYTE)
            nextPacket = k
        } else {
            if k == 0 {
                r = av_seek_frame(fmt, streamIndex, firstDts, AVSEEK_FLAG_BACKWARD)
                if r < 0 { r = avformat_seek_file(fmt, streamIndex, .min, .min, .max, 0) }
                nextPacket = 0
            } else {
                r = av_seek_frame(fmt, streamIndex, index.demuxerTimestamps[k], AVSEEK_FLAG_BACKWARD)
                nextPacket = -1
            }
        }
        if r < 0 && k == 0 {
            r = av_seek_frame(fmt, -1, 0, AVSEEK_FLAG_BYTE)
            nextPacket = 0
        }
        if r < 0 { throw .decodeFailed(path: name, detail: "seek failed (\(Self.errorString(r)))") }
    }

    /// Positions for reading the stream from sample timestamp `ts` (raw; callers trim).
    func positionRaw(atTimestamp ts: Int64) throws(TonearmError) {
        resetDecoder()
        if indexed {
            try positionAt(packet: index.packet(containing: ts))
        } else {
            let r = av_seek_frame(fmt, streamIndex, fromSamples(ts), AVSEEK_FLAG_BACKWARD)
            if r < 0 { try rewind() }
            packetCounter = -1
        }
    }

    // MARK: Exact seeking

    /// Preroll before a seek target so the decoder's output there is warmed up (in samples, packets, bytes).
    var preroll: (samples: Int64, packets: Int, bytes: Int) {
        switch codecID {
        case AV_CODEC_ID_MP3, AV_CODEC_ID_MP2, AV_CODEC_ID_MP1: (0, 4, 2048)
        case AV_CODEC_ID_AAC: (2048, 2, 0)
        case AV_CODEC_ID_VORBIS: (4096, 2, 0)
        // FFmpeg's CELT decoder keeps float energy predictions that converge to the bits of a
        // straight read only after about a second (80 ms, the spec's preroll, leaves errors of
        // 1e-2); 2 s made every measured CELT seek bit-identical. Its SILK (low bit rate) LPC
        // state is float and never converges exactly: differences stay near 2e-6.
        case AV_CODEC_ID_OPUS: (Int64(sampleRate) * 2, 2, 0)
        case AV_CODEC_ID_FLAC, AV_CODEC_ID_ALAC, AV_CODEC_ID_WAVPACK, AV_CODEC_ID_TTA, AV_CODEC_ID_APE: (0, 0, 0)
        default: codecID.rawValue >= AV_CODEC_ID_PCM_S16LE.rawValue && codecID.rawValue < AV_CODEC_ID_ADPCM_IMA_QT.rawValue
            ? (0, 0, 0) : (4096, 2, 0)
        }
    }

    /// Moves to frame `target` (0...length) exactly.
    func seek(to target: Int64) throws(TonearmError) {
        let target = max(0, min(target, length))
        if target == length {
            resetDecoder()
            pos = length
            return
        }
        if segmentSamples > 0 {
            // Canonical: decode the segment whose packets hold the target, as a straight read does.
            let goal = startTs + target
            var s = indexed ? segmentOf(index.timestamps[index.packet(containing: goal)]) : segmentOf(goal)
            while true {
                try startSegment(s)
                pos = target
                overshot = false
                checkOvershoot = true
                _ = try fillPending()
                checkOvershoot = false
                if !overshot || s == 0 { return }
                s -= 1 // the target is in the last frame of the previous segment
            }
        }
        let p = preroll
        for attempt in 0..<4 {
            let scale = Int64(1) << (2 * attempt)
            let goal = startTs + target
            if indexed {
                var k = index.packet(containing: goal)
                var packets = 0, bytes = 0
                while k > 0 && (packets < p.packets * Int(scale) || bytes < p.bytes * Int(scale)
                                || goal - index.timestamps[k] < p.samples * scale) {
                    k -= 1; packets += 1; bytes += Int(index.sizes[k])
                }
                if k == 0 { try rewind() } else { resetDecoder(); try positionAt(packet: k) }
            } else {
                let ts = goal - p.samples * scale
                if ts <= startTs { try rewind() } else { try positionRaw(atTimestamp: ts) }
            }
            pos = target
            overshot = false
            checkOvershoot = true
            _ = try fillPending()
            checkOvershoot = false
            if !overshot { return }
        }
        try rewind()
        pos = target
        _ = try fillPending()
    }
}
