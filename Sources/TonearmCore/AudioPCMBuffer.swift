// SPDX-License-Identifier: GPL-3.0-or-later

/// A buffer of non-interleaved Float32 PCM (the counterpart of `AVAudioPCMBuffer`).
///
/// Memory for `frameCapacity` frames of every channel is allocated once, at creation, and freed
/// when the buffer is released; nothing a buffer does after creation allocates, so a prepared
/// buffer may be used on a realtime thread.
///
/// Thread-safety: a buffer is a plain block of memory. It is `Sendable` so that it can be handed
/// from one thread to another (a decoder filling it, a player reading it), but two threads must not
/// use it at the same time; the code that hands it over provides the ordering.
public final class AudioPCMBuffer: @unchecked Sendable {
    /// The format of the samples: always Float32, non-interleaved.
    public let format: AudioFormat
    /// How many frames the buffer can hold.
    public let frameCapacity: AudioFrameCount
    /// How many frames hold valid audio (0...frameCapacity). Setting a larger value clamps.
    public var frameLength: AudioFrameCount {
        get { _frameLength }
        set { _frameLength = max(0, min(newValue, frameCapacity)) }
    }
    private var _frameLength: AudioFrameCount = 0
    private let storage: UnsafeMutablePointer<Float>
    private let channels: UnsafeMutablePointer<UnsafeMutablePointer<Float>>

    /// Creates a zeroed buffer for `frameCapacity` frames of `format.channelCount` channels.
    /// Returns nil when the format is not valid or the capacity is negative
    /// (as `AVAudioPCMBuffer(pcmFormat:frameCapacity:)` does).
    public init?(format: AudioFormat, frameCapacity: AudioFrameCount) {
        guard format.isValid, frameCapacity >= 0 else { return nil }
        var f = format
        f.commonFormat = .pcmFormatFloat32
        f.isInterleaved = false
        self.format = f
        self.frameCapacity = frameCapacity
        let total = max(1, frameCapacity * f.channelCount)
        storage = .allocate(capacity: total)
        storage.initialize(repeating: 0, count: total)
        channels = .allocate(capacity: f.channelCount)
        for c in 0..<f.channelCount { channels[c] = storage + c * frameCapacity }
    }

    deinit {
        storage.deallocate()
        channels.deallocate()
    }

    /// Pointers to each channel's samples (`floatChannelData[c][frame]`), as in AVAudioPCMBuffer.
    public var floatChannelData: UnsafePointer<UnsafeMutablePointer<Float>> { UnsafePointer(channels) }

    /// Number of channels.
    public var channelCount: Int { format.channelCount }

    /// The samples of channel `c`, `frameLength` long.
    public func channel(_ c: Int) -> UnsafeMutableBufferPointer<Float> {
        precondition(c >= 0 && c < format.channelCount, "channel \(c) out of range")
        return UnsafeMutableBufferPointer(start: channels[c], count: _frameLength)
    }

    /// Copies of every channel's valid samples, for tests and analysis (allocates).
    public func channelArrays() -> [[Float]] {
        (0..<channelCount).map { Array(channel($0)) }
    }

    /// Sets every sample to zero and `frameLength` to 0.
    public func reset() {
        storage.update(repeating: 0, count: max(1, frameCapacity * format.channelCount))
        _frameLength = 0
    }
}
