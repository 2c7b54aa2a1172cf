// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg
import TonearmCore

/// An encoder for a live stream (the daemon's HTTP output): interleaved stereo Float32 in, the
/// encoded bytes out, packet by packet, so that a listener joining late starts at a packet's
/// start after ``streamHeader``. FLAC (`flac`, the default) or MP3 (`libmp3lame`). One thread.
public final class LiveEncoder {
    private let encoder: AudioEncoder
    /// What a listener gets first: FLAC's `fLaC` marker and STREAMINFO; nothing for MP3.
    public let streamHeader: [UInt8]
    public let contentType: String
    private let left: UnsafeMutablePointer<Float>
    private let right: UnsafeMutablePointer<Float>
    private let capacity = 8192

    /// `codec`: `flac` or `mp3`.
    public init(codec: String, sampleRate: Int) throws(TonearmError) {
        let mp3 = codec == "mp3"
        let choice = mp3 ? EncoderChoice(encoderName: "libmp3lame", bitRate: 256_000) : EncoderChoice(encoderName: "flac", bits: 16)
        encoder = try AudioEncoder(choice: choice, sampleRate: sampleRate, channels: 2, globalHeader: false, path: "the HTTP stream")
        contentType = mp3 ? "audio/mpeg" : "audio/flac"
        if mp3 {
            streamHeader = []
        } else {
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
        }
        left = .allocate(capacity: capacity)
        right = .allocate(capacity: capacity)
    }

    deinit {
        left.deallocate()
        right.deallocate()
    }

    /// Encodes `frames` stereo frames; `emit` gets each packet's bytes.
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
                emit(UnsafeRawBufferPointer(start: p.pointee.data, count: Int(p.pointee.size)))
            }
            done += n
        }
    }
}
