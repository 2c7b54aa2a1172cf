// SPDX-License-Identifier: GPL-3.0-or-later
import TonearmCodecs
import TonearmCore
import TonearmNetwork

/// Whether a ``Player`` is playing, paused, or waiting to play (`AVPlayer.TimeControlStatus`).
public enum TimeControlStatus: Sendable, Hashable, CustomStringConvertible {
    /// The rate is 0: the user paused, the item ended or failed.
    case paused
    /// The rate is not 0 but no audio moves yet, for `reason`.
    case waitingToPlayAtSpecifiedRate(WaitingReason)
    /// Audio is being played.
    case playing

    public var description: String {
        switch self {
        case .paused: "paused"
        case .waitingToPlayAtSpecifiedRate(let r): "waiting (\(r.rawValue))"
        case .playing: "playing"
        }
    }
}

/// Why a player with a rate is not playing (`AVPlayer.WaitingReason`).
public enum WaitingReason: String, Sendable, Hashable {
    /// The buffer is too short to play without stalling: playback waits until the item is
    /// likely to keep up (``PlayerItem/isPlaybackLikelyToKeepUp``).
    case toMinimizeStalls
    /// The item is still being opened: nothing is known yet about how fast it arrives.
    case evaluatingBufferingRate
    /// There is no item, or it failed.
    case noItemToPlay
}

/// A span of an item's timeline, in seconds (`CMTimeRange`).
public struct TimeRange: Sendable, Hashable, CustomStringConvertible {
    public var start: Double
    public var duration: Double
    public var end: Double { start + duration }
    public init(start: Double, duration: Double) {
        self.start = start
        self.duration = max(0, duration)
    }
    public init(start: Double, end: Double) { self.init(start: start, duration: end - start) }
    public func contains(_ t: Double) -> Bool { t >= start && t <= end }
    public var description: String { String(format: "%.2f–%.2f s", start, end) }
}

/// What a ``Player`` and its items report, in order, on the player's control thread (never the
/// render thread). The item notifications of `AVPlayerItem` are here as cases, and also on
/// ``PlayerItem/events``.
public enum PlayerEvent: Sendable, Hashable {
    /// ``Player/timeControlStatus`` changed.
    case timeControlStatusChanged(TimeControlStatus)
    /// ``Player/rate`` changed (0 when the item ended, failed, or the player paused).
    case rateChanged(Float)
    /// ``Player/currentItem`` was replaced.
    case currentItemChanged
    /// The current item's ``PlayerItem/status`` changed.
    case itemStatusChanged(PlayerItem.Status)
    /// The item played to its end and the end was heard (`AVPlayerItemDidPlayToEndTime`).
    case didPlayToEndTime
    /// The item could not play to its end (`AVPlayerItemFailedToPlayToEndTime`): the network
    /// failed for good, the data went bad. The item's status is now failed with this error.
    case failedToPlayToEndTime(TonearmError)
    /// The audio ran out before the end: playback waits until the buffer refills
    /// (`AVPlayerItemPlaybackStalled`).
    case playbackStalled
    /// A seek has landed at `to` seconds (the decoder stands there; the audio follows).
    case seeked(to: Double)
    /// A request was made (`AVPlayerItemNewAccessLogEntry`).
    case newAccessLogEntry(NetworkAccessLogEntry)
    /// A network problem was met, maybe overcome (`AVPlayerItemNewErrorLogEntry`).
    case newErrorLogEntry(NetworkErrorLogEntry)
    /// New timed metadata reached the listener: a radio stream's `StreamTitle` and `StreamUrl`.
    /// Delivered when the audio it came with is heard, not when it arrived.
    case timedMetadata([String: String])
    /// A decoding problem that did not stop playback (a corrupt packet skipped).
    case decodeWarning(AudioWarning)
    /// The output could not be opened or went away; the player paused at its place. `reason` says
    /// why. `awaitingReturn`: the output can come back by itself (a sound server that restarts)
    /// and the player watches for it; if it was playing, it plays on from its place when the
    /// output answers (``outputReturned(resuming:)``).
    case outputLost(reason: String, awaitingReturn: Bool)
    /// The output lost earlier answers again. `resuming`: the player plays on from where it was.
    case outputReturned(resuming: Bool)
    /// The first video frame after a start or a seek is shown at `time` (item seconds): a layer
    /// becomes ready for display (`AVPlayerLayer.isReadyForDisplay`). Only while video outputs
    /// or renderers are attached.
    case readyForDisplay(time: Double)
    /// The video could not be decoded (on); the sound plays on, the picture keeps its last frame.
    case videoFailed(TonearmError)
    /// ``PlayerItem/presentationSize`` changed (what AVPlayerItem's key-value observers of
    /// `presentationSize` hear): the item's first frame is on screen, or an HLS variant of
    /// another size is. Only while video outputs or renderers are attached.
    case presentationSizeChanged(VideoSize)
}

/// An opaque handle for a time observer (``Player/removeTimeObserver(_:)``).
public struct TimeObserverToken: Sendable, Hashable {
    let id: UInt64
}
