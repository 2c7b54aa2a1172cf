// SPDX-License-Identifier: GPL-3.0-or-later

/// The demuxer for a file, from its first bytes.
enum ContainerSniffer {
    enum Verdict: Equatable {
        /// FFmpeg's demuxer by that name.
        case known(String)
        /// An image format (no sound in it).
        case image
        /// Nothing recognised: FFmpeg's probing decides.
        case unknown
    }

    /// Every demuxer ``sniff(head:file:)`` names.
    static let demuxers = ["flac", "ogg", "wav", "aiff", "mov", "matroska", "caf", "wv", "ape", "mp3", "aac"]

    static func sniff(head: [UInt8], file: any TagByteSource) -> Verdict {
        func at(_ o: Int, _ s: String) -> Bool {
            let b = Array(s.utf8)
            return head.count >= o + b.count && head[o..<(o + b.count)].elementsEqual(b)
        }
        if at(0, "fLaC") { return .known("flac") }
        if at(0, "OggS") { return .known("ogg") }
        if (at(0, "RIFF") || at(0, "RF64") || at(0, "BW64")) && at(8, "WAVE") { return .known("wav") }
        if at(0, "FORM") && (at(8, "AIFF") || at(8, "AIFC")) { return .known("aiff") }
        if at(4, "ftyp") { return .known("mov") }
        if at(0, "\u{1A}\u{45}") && head.count >= 4 && head[2] == 0xDF && head[3] == 0xA3 { return .known("matroska") }
        if at(0, "caff") { return .known("caf") }
        if at(0, "wvpk") { return .known("wv") }
        if at(0, "MAC ") { return .known("ape") }
        if head.count >= 3 && head[0] == 0xFF && head[1] == 0xD8 && head[2] == 0xFF { return .image }
        if at(0, "\u{89}PNG") || at(0, "GIF8") || (at(0, "RIFF") && at(8, "WEBP")) { return .image }
        if head.count >= 8 && head[0] == 0x89 && at(1, "PNG") { return .image }
        // MPEG audio, possibly after ID3v2 tags.
        var offset = 0
        var bytes = head
        if at(0, "ID3") {
            guard let end = ID3v2Skip.end(of: file) else { return .unknown }
            offset = end
            guard let after = file.read(at: offset, count: min(16, file.size - offset)) else { return .unknown }
            bytes = after
            if bytes.count >= 4 && bytes[0..<4].elementsEqual("fLaC".utf8) { return .known("flac") }
        }
        if bytes.count >= 4, MPEGAudioHeader(bytes[0], bytes[1], bytes[2], bytes[3]) != nil {
            // After an ID3v2 tag a frame header is evidence enough; alone, two frames in a row are needed.
            if offset > 0 || MP3Info.read(file) != nil { return .known("mp3") }
            return .unknown
        }
        if bytes.count >= 4, bytes[0] == 0xFF, bytes[1] & 0xF6 == 0xF0, (bytes[2] >> 2) & 0xF < 13 {
            return .known("aac")  // ADTS
        }
        return .unknown
    }

    /// Where the audio of a raw MPEG audio or ADTS file (`head`: its first bytes) ends when an
    /// APE tag follows it (with or without an ID3v1 tag after that); nil when nothing needs
    /// cutting. FFmpeg's demuxers of those formats read on into an APE tag and hand its bytes to
    /// the decoder as packets (binary cover art has sync words enough to give "frames"), and
    /// the tag's size makes FFmpeg doubt the Xing frame's length; an ID3v1 tag alone they handle.
    static func audioEnd(head: [UInt8], file: any TagByteSource) -> Int? {
        guard let start = APETag.start(in: file), start > 0 else { return nil }
        switch sniff(head: head, file: file) {
        case .known("mp3"), .known("aac"):
            return start > (ID3v2Skip.end(of: file) ?? 0) ? start : nil
        default:
            return nil
        }
    }
}
