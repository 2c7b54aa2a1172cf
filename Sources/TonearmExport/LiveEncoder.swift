// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg
import TonearmCore

/// The formats of a live stream (the daemon's HTTP output).
public enum LiveStreamFormat: String, Sendable, Hashable, CaseIterable {
    /// FLAC in its native stream (`fLaC`, STREAMINFO, frames), lossless.
    case flac
    /// MP3 (LAME, 256 kb/s): the one every player takes.
    case mp3
    /// Opus (libopus, 128 kb/s) in Ogg.
    case opus

    /// The HTTP `Content-Type`.
    public var contentType: String {
        switch self {
        case .flac: "audio/flac"
        case .mp3: "audio/mpeg"
        case .opus: "audio/ogg"
        }
    }

    /// Whether titles go in the stream itself (a new chained Ogg stream whose OpusTags hold
    /// them, as MPD's httpd does for Ogg) rather than in ICY metadata blocks.
    public var titlesInStream: Bool { self == .opus }
}

/// An encoder for a live stream (the daemon's HTTP output): interleaved stereo Float32 in, the
/// encoded bytes out, so that a listener joining late starts at a packet's (Ogg: a page's)
/// start after ``streamHeader``. FLAC, MP3 (`libmp3lame`) or Ogg Opus (`libopus`, one packet
/// per page). One thread.
public final class LiveEncoder {
    public let format: LiveStreamFormat
    private var encoder: AudioEncoder
    private let sampleRate: Int
    /// What a listener gets first: FLAC's `fLaC` marker and STREAMINFO; for Opus the current
    /// Ogg stream's OpusHead and OpusTags pages; nothing for MP3.
    public private(set) var streamHeader: [UInt8]
    public var contentType: String { format.contentType }
    private let left: UnsafeMutablePointer<Float>
    private let right: UnsafeMutablePointer<Float>
    private let capacity = 8192
    // Ogg Opus: the current logical stream, the samples it holds, and its newest packet, paged
    // when the next one comes so that the stream's last page can carry the EOS flag.
    private var ogg = OggPageWriter(serial: 0x546f_6e00)
    private var granule: Int64 = 0
    private var held: [UInt8]?

    /// `comments`: for Opus, the first stream's OpusTags comments (`TITLE=…`).
    public init(format: LiveStreamFormat, sampleRate: Int, comments: [String] = []) throws(TonearmError) {
        self.format = format
        self.sampleRate = sampleRate
        encoder = try Self.makeEncoder(format, sampleRate: sampleRate)
        streamHeader = []
        left = .allocate(capacity: capacity)
        right = .allocate(capacity: capacity)
        switch format {
        case .mp3:
            break
        case .flac:
            let ctx = encoder.context.pointee
            var header: [UInt8] = Array("fLaC".utf8)
            let size = Int(ctx.extradata_size)
            guard size >= 34, let extra = ctx.extradata else {
                throw .writeFailed(path: "the HTTP stream", reason: "the FLAC encoder gave no STREAMINFO")
            }
            // The last metadata block, type 0 (STREAMINFO), 34 bytes. Lengths and sample count
            // are left as the encoder wrote them: a live stream's are unknown.
            header += [0x80, 0, 0, 34]
            header += (0..<34).map { extra[$0] }
            streamHeader = header
        case .opus:
            streamHeader = try oggHeader(comments: comments)
        }
    }

    deinit {
        left.deallocate()
        right.deallocate()
    }

    private static func makeEncoder(_ format: LiveStreamFormat, sampleRate: Int) throws(TonearmError) -> AudioEncoder {
        let choice = switch format {
        case .flac: EncoderChoice(encoderName: "flac", bits: 16)
        case .mp3: EncoderChoice(encoderName: "libmp3lame", bitRate: 256_000)
        case .opus: EncoderChoice(encoderName: "libopus", bitRate: 128_000)
        }
        return try AudioEncoder(choice: choice, sampleRate: sampleRate, channels: 2, globalHeader: false, path: "the HTTP stream")
    }

    /// The current Ogg stream's OpusHead (the encoder's, with its pre-skip) and OpusTags pages.
    private func oggHeader(comments: [String]) throws(TonearmError) -> [UInt8] {
        let ctx = encoder.context.pointee
        guard ctx.extradata_size >= 19, let extra = ctx.extradata else {
            throw .writeFailed(path: "the HTTP stream", reason: "the Opus encoder gave no OpusHead")
        }
        let head = (0..<Int(ctx.extradata_size)).map { extra[$0] }
        func le32(_ v: Int) -> [UInt8] { withUnsafeBytes(of: UInt32(v).littleEndian, Array.init) }
        let vendor = Array("Tonearm".utf8)
        var tags = Array("OpusTags".utf8) + le32(vendor.count) + vendor + le32(comments.count)
        for c in comments {
            let bytes = Array(c.utf8.prefix(4096))
            tags += le32(bytes.count) + bytes
        }
        return ogg.page(head, granule: 0) + ogg.page(tags, granule: 0)
    }

    /// Encodes `frames` stereo frames; `emit` gets the stream's bytes (each packet, or Ogg page).
    public func encode(_ samples: UnsafePointer<Float>, frames: Int, emit: (UnsafeRawBufferPointer) -> Void) throws(TonearmError) {
        var done = 0
        while done < frames {
            let n = min(capacity, frames - done)
            for i in 0..<n {
                left[i] = samples[(done + i) * 2]
                right[i] = samples[(done + i) * 2 + 1]
            }
            let planes = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: 2)
            defer { planes.deallocate() }
            planes[0] = left
            planes[1] = right
            try encoder.encode(UnsafePointer(planes), count: n) { (p: UnsafeMutablePointer<AVPacket>) throws(TonearmError) in
                packet(p, emit: emit)
            }
            done += n
        }
    }

    private func packet(_ p: UnsafeMutablePointer<AVPacket>, emit: (UnsafeRawBufferPointer) -> Void) {
        let bytes = UnsafeRawBufferPointer(start: p.pointee.data, count: Int(p.pointee.size))
        guard format == .opus else { emit(bytes); return }
        if let held {
            ogg.page(held, granule: granule).withUnsafeBytes(emit)
        }
        held = Array(bytes)
        granule += p.pointee.duration > 0 ? p.pointee.duration : 960
    }

    /// Opus: ends the current Ogg stream (the encoder flushed, its last page marked EOS) and
    /// begins a chained one whose OpusTags hold `comments` (`TITLE=…`, `ARTIST=…`); `emit`
    /// gets those pages, and ``streamHeader`` is the new stream's from now on. Nothing for
    /// FLAC and MP3 (their titles go in ICY metadata).
    public func startStream(comments: [String], emit: (UnsafeRawBufferPointer) -> Void) throws(TonearmError) {
        guard format == .opus else { return }
        try encoder.finish { (p: UnsafeMutablePointer<AVPacket>) throws(TonearmError) in packet(p, emit: emit) }
        if let held {
            ogg.page(held, granule: granule, last: true).withUnsafeBytes(emit)
        }
        held = nil
        granule = 0
        ogg = OggPageWriter(serial: ogg.serial &+ 1)
        encoder = try Self.makeEncoder(format, sampleRate: sampleRate)
        streamHeader = try oggHeader(comments: comments)
        streamHeader.withUnsafeBytes(emit)
    }
}
