// SPDX-License-Identifier: GPL-3.0-or-later

/// An MP3's first frame and its Xing/Info (with LAME) or VBRI tag.
struct MP3Info {
    /// The header of the first audio frame (after a Xing/Info/VBRI frame).
    var header: MPEGAudioHeader
    /// Where the audio frames start (after ID3v2 tags; the Xing frame included).
    var audioStart: Int
    /// Audio frames, from a Xing/Info or VBRI tag.
    var frames: Int64?
    /// Samples FFmpeg trims, from a LAME tag: the encoder delay and padding (the decoder's own
    /// delay of 529 samples is trimmed at the start and given back at the end).
    var trimmed = 0

    /// Reads the file's start; nil when no valid frame is found near it.
    static func read(_ file: any TagByteSource) -> MP3Info? {
        guard let start = ID3v2Skip.end(of: file) ?? (file.size > 0 ? 0 : nil),
              let bytes = file.read(at: start, count: min(file.size - start, 8192)), bytes.count >= 4 else { return nil }
        func header(at o: Int) -> MPEGAudioHeader? {
            guard o + 4 <= bytes.count, let h = MPEGAudioHeader(bytes[o], bytes[o + 1], bytes[o + 2], bytes[o + 3]),
                  h.layer != 0 else { return nil }
            return h
        }
        func u32(_ o: Int) -> Int? {
            guard o + 4 <= bytes.count else { return nil }
            return Int(bytes[o]) << 24 | Int(bytes[o + 1]) << 16 | Int(bytes[o + 2]) << 8 | Int(bytes[o + 3])
        }
        func tag(_ o: Int, _ s: String) -> Bool {
            o + 4 <= bytes.count && bytes[o..<(o + 4)].elementsEqual(s.utf8)
        }
        // A Xing/Info or VBRI tag is in the first frame, right after the ID3v2 tags (as FFmpeg reads it).
        if let first = header(at: 0), first.frameLength > 0 {
            let x = 4 + first.sideInfoSize
            var info: MP3Info?
            if first.layer == 3 && (tag(x, "Xing") || tag(x, "Info")), let flags = u32(x + 4) {
                var o = x + 8
                var frames: Int64?
                if flags & 1 != 0 { frames = u32(o).map(Int64.init); o += 4 }
                if flags & 2 != 0 { o += 4 }
                if flags & 4 != 0 { o += 100 }
                if flags & 8 != 0 { o += 4 }
                info = MP3Info(header: first, audioStart: start + first.frameLength, frames: frames)
                // LAME tag: a 9-byte encoder version, 12 bytes, then 12 bits of delay and 12 of padding.
                if frames != nil, tag(o, "LAME") || tag(o, "Lavf") || tag(o, "Lavc"), o + 24 <= bytes.count {
                    let v = Int(bytes[o + 21]) << 16 | Int(bytes[o + 22]) << 8 | Int(bytes[o + 23])
                    info!.trimmed = (v >> 12) + (v & 0xFFF)
                }
            } else if tag(4 + 32, "VBRI"), bytes.count >= 4 + 32 + 18, bytes[40] == 0 && bytes[41] == 1 {
                info = MP3Info(header: first, audioStart: start + first.frameLength, frames: u32(4 + 32 + 14).map(Int64.init))
            }
            if var info {
                // The stream's parameters come from the first audio frame.
                if let next = header(at: first.frameLength) { info.header = next }
                if info.frames == 0 { info.frames = nil }
                return info
            }
        }
        // No tag: the first frame whose successor is where its length says (as FFmpeg resyncs).
        var o = 0
        while o + 4 <= bytes.count {
            if let h = header(at: o) {
                if h.frameLength > 0, let next = header(at: o + h.frameLength),
                   next.version == h.version, next.layer == h.layer, next.sampleRate == h.sampleRate {
                    return MP3Info(header: h, audioStart: start + o)
                }
                if h.frameLength > 0, o + h.frameLength >= file.size - start { return MP3Info(header: h, audioStart: start + o) }
            }
            o += 1
        }
        return nil
    }
}
