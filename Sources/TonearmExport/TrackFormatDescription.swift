// SPDX-License-Identifier: GPL-3.0-or-later

/// How a track's samples are stored (the counterpart of `CMFormatDescription`), as the container
/// declares them. Audio fields are nil for other media, picture fields nil for audio.
public struct TrackFormatDescription: Sendable, Hashable, Codable {
    /// FFmpeg's codec name: "aac", "opus", "flac", "pcm_s16le", "h264", "mpeg4", "subrip", ….
    public var codecName: String
    /// The codec's long name, e.g. "AAC (Advanced Audio Coding)", when FFmpeg knows it.
    public var codecLongName: String?
    public var sampleRate: Int?
    public var channelCount: Int?
    /// The channel layout as FFmpeg describes it ("mono", "stereo", "5.1", …).
    public var channelLayout: String?
    /// Bits per sample for PCM and lossless audio.
    public var bitsPerSample: Int?
    /// Bits per second, when the container or codec states it.
    public var bitRate: Int?
    public var width: Int?
    public var height: Int?

    public init(codecName: String, codecLongName: String? = nil, sampleRate: Int? = nil, channelCount: Int? = nil,
                channelLayout: String? = nil, bitsPerSample: Int? = nil, bitRate: Int? = nil,
                width: Int? = nil, height: Int? = nil) {
        self.codecName = codecName
        self.codecLongName = codecLongName
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.channelLayout = channelLayout
        self.bitsPerSample = bitsPerSample
        self.bitRate = bitRate
        self.width = width
        self.height = height
    }
}
