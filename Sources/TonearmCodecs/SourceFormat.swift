// SPDX-License-Identifier: GPL-3.0-or-later
import TonearmCore

/// What a media file holds, as stored (the counterpart of `AVAudioFile.fileFormat`): container,
/// codec and the stream's own parameters. Decoded audio is always handed out in the
/// ``AudioFile/processingFormat`` (Float32, non-interleaved) at the same rate and channel count.
public struct SourceFormat: Sendable, Hashable, CustomStringConvertible {
    /// The container, readable: "WAV", "MP3", "MP4", "M4A", "FLAC", "Ogg", "Matroska", "WebM", ….
    public var containerName: String
    /// FFmpeg's name of the demuxer, e.g. "wav" or "mov,mp4,m4a,3gp,3g2,mj2".
    public var formatName: String
    /// FFmpeg's codec name: "pcm_s16le", "flac", "aac", "mp3", "opus", "vorbis", "alac", ….
    public var codecName: String
    /// Frames per second of the stored audio.
    public var sampleRate: Int
    /// Channels of the stored audio.
    public var channelCount: Int
    /// Bits per sample for PCM and lossless codecs; nil for lossy codecs.
    public var bitsPerSample: Int?
    /// The audio stream's bit rate in bits per second, when known.
    public var bitRate: Int?
    /// The channel layout, as FFmpeg describes it ("mono", "stereo", "5.1", …).
    public var channelLayout: String

    public init(containerName: String, formatName: String, codecName: String, sampleRate: Int,
                channelCount: Int, bitsPerSample: Int?, bitRate: Int?, channelLayout: String) {
        self.containerName = containerName
        self.formatName = formatName
        self.codecName = codecName
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.bitsPerSample = bitsPerSample
        self.bitRate = bitRate
        self.channelLayout = channelLayout
    }

    public var description: String {
        var s = "\(containerName), \(codecName), \(sampleRate) Hz, \(channelLayout)"
        if let b = bitsPerSample { s += ", \(b)-bit" }
        if let r = bitRate { s += ", \(r / 1000) kb/s" }
        return s
    }
}
