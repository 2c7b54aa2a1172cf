// SPDX-License-Identifier: GPL-3.0-or-later

/// A position in a stream, counted in sample frames (one sample per channel).
public typealias AudioFramePosition = Int64

/// A number of sample frames.
public typealias AudioFrameCount = Int

/// The sample representation of PCM audio, as in AVAudioCommonFormat.
public enum AudioCommonFormat: String, Sendable, Hashable, Codable {
    case pcmFormatFloat32
    case pcmFormatFloat64
    case pcmFormatInt16
    case pcmFormatInt32

    /// Bytes one sample of one channel occupies.
    public var bytesPerSample: Int {
        switch self {
        case .pcmFormatFloat32, .pcmFormatInt32: 4
        case .pcmFormatFloat64: 8
        case .pcmFormatInt16: 2
        }
    }
}

/// The format of PCM audio: sample rate, channels, sample type and layout
/// (the counterpart of `AVAudioFormat` for PCM).
///
/// Tonearm's *processing format* — what decoders hand out and the engine renders — is always
/// `Float32`, non-interleaved, at the source's own sample rate and channel count
/// (``AudioFormat/standard(sampleRate:channels:)``). Output drivers take interleaved `Float32`.
public struct AudioFormat: Sendable, Hashable, Codable, CustomStringConvertible {
    public var sampleRate: Double
    public var channelCount: Int
    public var commonFormat: AudioCommonFormat
    public var isInterleaved: Bool
    /// Where each channel belongs, when the source says (a decoder sets it from the file); nil
    /// for "unknown": outputs then take ``AudioChannelLayout/defaultLayout(channelCount:)``.
    /// Ignored (and not kept) unless it has ``channelCount`` positions.
    public var channelLayout: AudioChannelLayout? {
        didSet { if channelLayout?.channelCount != channelCount { channelLayout = nil } }
    }

    /// Creates a format. `sampleRate` must be positive and `channelCount` in 1...64; a format that
    /// breaks those rules is still representable, but ``isValid`` is false and consumers refuse it.
    /// A `channelLayout` with another number of channels than `channelCount` is dropped.
    public init(sampleRate: Double, channelCount: Int,
                commonFormat: AudioCommonFormat = .pcmFormatFloat32, isInterleaved: Bool = false,
                channelLayout: AudioChannelLayout? = nil) {
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.commonFormat = commonFormat
        self.isInterleaved = isInterleaved
        self.channelLayout = channelLayout?.channelCount == channelCount ? channelLayout : nil
    }

    /// The layout to place the channels by: ``channelLayout``, else FFmpeg's default for the
    /// channel count; nil past eight channels without a layout.
    public var effectiveChannelLayout: AudioChannelLayout? {
        channelLayout ?? AudioChannelLayout.defaultLayout(channelCount: channelCount)
    }

    /// This format as output drivers take it (Float32, interleaved), same rate, channels and layout.
    public var interleavedFloat: AudioFormat {
        AudioFormat(sampleRate: sampleRate, channelCount: channelCount, isInterleaved: true, channelLayout: channelLayout)
    }

    /// Float32, non-interleaved: the processing format (AVAudioFormat's `standardFormatWithSampleRate`).
    public static func standard(sampleRate: Double, channels: Int) -> AudioFormat {
        AudioFormat(sampleRate: sampleRate, channelCount: channels)
    }

    /// Float32, interleaved: what output drivers consume.
    public static func interleavedFloat(sampleRate: Double, channels: Int) -> AudioFormat {
        AudioFormat(sampleRate: sampleRate, channelCount: channels, isInterleaved: true)
    }

    /// Whether the format can be used for audio (positive rate, 1...64 channels).
    public var isValid: Bool { sampleRate > 0 && sampleRate.isFinite && (1...64).contains(channelCount) }

    /// Seconds for `frames` frames at this format's rate.
    public func duration(ofFrames frames: AudioFramePosition) -> Double {
        Double(frames) / sampleRate
    }

    /// Frames in `seconds` at this format's rate, rounded to the nearest frame.
    public func frames(forSeconds seconds: Double) -> AudioFramePosition {
        AudioFramePosition((seconds * sampleRate).rounded())
    }

    public var description: String {
        let layout = isInterleaved ? "interleaved" : "non-interleaved"
        let channels = channelLayout.map { "\($0) (\(channelCount) ch)" } ?? "\(channelCount) ch"
        return "\(Int(sampleRate)) Hz, \(channels), \(commonFormat.rawValue), \(layout)"
    }
}
