// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg
import Foundation
import TonearmCore

// The gapless timeline of an ``FFmpegDecoder``: where the decoded stream starts and ends
// (decoding its start and its end, capped by what the container says: ``GaplessTimeline``), and
// the decoded frames trimmed to it.
extension FFmpegDecoder {
    /// Finds where the decoded stream starts and ends, and positions at the start.
    func establishTimeline() throws(TonearmError) {
        // Start: the timestamp of the first decoded sample.
        try rewind()
        var firstTs: Int64?
        var frames = 0
        while let ts = try receiveFrameRaw() {
            frames += 1
            if frame.pointee.nb_samples > 0 { firstTs = ts; break }
            if frames > 64 { break }
        }
        guard let firstTs else {
            throw .decodeFailed(path: name, detail: "no audio could be decoded")
        }
        startTs = firstTs

        if streaming {
            // The end is not looked for: the container's length when it states one.
            length = headerFrames ?? .max
            reportedTruncation = true  // an unknown or estimated length is no truncation
            try seek(to: 0)
            return
        }

        // End: decode the tail; the container's own end caps it (AAC padding in MP4).
        var cap: Int64 = .max
        if indexed {
            cap = index.timestamps[index.timestamps.count - 1]
        } else if stream.pointee.duration > 0 {
            let st = stream.pointee.start_time != Self.nopts ? stream.pointee.start_time : 0
            cap = toSamples(st + stream.pointee.duration)
        }
        var end: Int64 = startTs
        var margin = Int64(sampleRate)
        while true {
            let estimatedEnd = cap != .max ? cap : Int64.max
            let from = estimatedEnd == .max ? startTs : max(startTs, estimatedEnd - margin)
            end = startTs
            if from <= startTs { try rewind() } else { try positionRaw(atTimestamp: from) }
            var got = false
            while let ts = try receiveFrameRaw() {
                let n = Int64(frame.pointee.nb_samples)
                if n > 0 { got = true; end = max(end, ts + n) }
            }
            if got || from <= startTs { break }
            margin *= 4
        }
        // MP4 written with a 1/1000 s movie timescale (FFmpeg's default) states the edit list's
        // duration rounded to the millisecond, and FFmpeg cuts the last packet to it; the track's
        // own duration (its sample table) is exact. Trust the track when the two differ by less
        // than a millisecond.
        if formatName.hasPrefix("mov,"), cap != .max, io == nil, firstDts < 0,
           let f = fmt, let raw = GaplessTimeline.trackDurationIgnoringEditList(f, streamIndex: streamIndex) {
            let exactEnd = toSamples(raw + firstDts)
            let tick = Int64((Double(sampleRate) / 1000).rounded(.up)) + 1
            if exactEnd > cap, exactEnd - cap <= tick, exactEnd <= end { cap = exactEnd }
        }
        length = max(0, min(end, cap) - startTs)

        // iTunes gapless info (files without an edit list).
        if let smpb = GaplessTimeline.iTunSMPB(fmt, stream), length > smpb.frames {
            if length >= smpb.delay + smpb.frames {
                startTs += smpb.delay
            }
            length = smpb.frames
        }
        if let h = headerFrames, !indexed, h > length + Int64(max(4096, codecCtx?.pointee.frame_size ?? 0)) {
            addWarning(.truncated(path: name, expectedFrames: h, actualFrames: length))
            reportedTruncation = true
        }
        try seek(to: 0)
    }

    /// Decodes until there are pending frames; false at the end of the stream.
    func fillPending() throws(TonearmError) -> Bool {
        while pending.count == 0 {
            if pos >= length { return false }
            guard let ts = try receiveFrameRaw() else {
                if pos < length && !reportedTruncation {
                    reportedTruncation = true
                    addWarning(.truncated(path: name, expectedFrames: length, actualFrames: pos))
                }
                return false
            }
            let n = Int64(frame.pointee.nb_samples)
            if n <= 0 { continue }
            let fpos = ts - startTs
            if checkOvershoot {
                checkOvershoot = false
                if fpos > pos { overshot = true; return false }
            }
            var drop: Int64 = 0, gap: Int64 = 0
            if fpos < pos {
                drop = pos - fpos
                if drop >= n { continue }
            } else if fpos > pos {
                gap = fpos - pos
                if gap > Int64(sampleRate) { pos = fpos; gap = 0 }
            }
            var take = n - drop
            if pos + gap + take > length { take = max(0, length - pos - gap) }
            if gap > length - pos { gap = length - pos }
            let total = Int(gap + take)
            if total == 0 { continue }
            pending.reserve(total, channels: channels)
            if gap > 0 {
                for c in 0..<channels { pending.channelData[c].update(repeating: 0, count: Int(gap)) }
            }
            if take > 0 && !convertFrame(frame, channels: channels, from: Int(drop), count: Int(take),
                                         into: pending.channelData, offset: Int(gap)) {
                throw .decodeFailed(path: name, detail: "unsupported sample format \(frame.pointee.format)")
            }
            pending.filled(total)
        }
        return true
    }
}
