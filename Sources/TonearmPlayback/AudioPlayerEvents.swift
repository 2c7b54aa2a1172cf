// SPDX-License-Identifier: GPL-3.0-or-later
import TonearmCore
import TonearmEngine

/// What an ``AudioPlayer`` reports, as an async sequence (``AudioPlayer/events``).
public enum AudioPlayerEvent: Sendable, Equatable {
    /// Playback ended: `successfully` is true when the end of the audio (after every loop) was
    /// played, false when the output was lost or decoding failed for good.
    case didFinishPlaying(successfully: Bool)
    /// A problem that did not stop playback (a corrupt packet skipped, a truncated file), or one
    /// that did (`.decodeFailed`), as `audioPlayerDecodeErrorDidOccur`.
    case decodeErrorDidOccur(DecodeProblem)
    /// Another stream (a phone call, another app's exclusive session) took the output; the player paused.
    case interruptionBegan
    /// The interruption is over; with `shouldResume` the player resumed if it had been playing.
    case interruptionEnded(shouldResume: Bool)
}

/// A decoding problem reported by ``AudioPlayerEvent/decodeErrorDidOccur(_:)`` (an `Error`, so
/// that the iOS form of the delegate method receives it as `(any Error)?`).
public enum DecodeProblem: Error, Sendable, Equatable, CustomStringConvertible {
    case warning(AudioWarning)
    case error(TonearmError)

    public var description: String {
        switch self {
        case .warning(let w): w.description
        case .error(let e): e.description
        }
    }
}

/// For code ported from iOS: the `AVAudioPlayerDelegate` methods. Every method has a default
/// that does nothing. They are called on the player's event thread (never the render thread),
/// one at a time, in order. The player holds its delegate weakly.
///
/// Each event has two forms: Tonearm's (typed: ``DecodeProblem``, `shouldResume`) and iOS's
/// (`error: (any Error)?`, `withOptions flags: Int` where 1 is `shouldResume`, as
/// `AVAudioSession.InterruptionOptions`). The player calls Tonearm's form; its default calls the
/// iOS form — so a delegate written for iOS, with the iOS signatures, is called (before, such a
/// method compiled and was never called). Implement one form of each; a delegate that implements
/// Tonearm's form is not called in the iOS form.
public protocol AudioPlayerDelegate: AnyObject, Sendable {
    func audioPlayerDidFinishPlaying(_ player: AudioPlayer, successfully flag: Bool)
    func audioPlayerDecodeErrorDidOccur(_ player: AudioPlayer, error: DecodeProblem)
    func audioPlayerBeginInterruption(_ player: AudioPlayer)
    func audioPlayerEndInterruption(_ player: AudioPlayer, shouldResume: Bool)
    /// The iOS form of `audioPlayerDecodeErrorDidOccur(_:error: DecodeProblem)`: the
    /// error is the ``DecodeProblem``.
    func audioPlayerDecodeErrorDidOccur(_ player: AudioPlayer, error: (any Error)?)
    /// The iOS form of ``audioPlayerEndInterruption(_:shouldResume:)``: `flags` is 1
    /// (`AVAudioSession.InterruptionOptions.shouldResume`) when playback may resume, else 0.
    func audioPlayerEndInterruption(_ player: AudioPlayer, withOptions flags: Int)
}

extension AudioPlayerDelegate {
    public func audioPlayerDidFinishPlaying(_ player: AudioPlayer, successfully flag: Bool) {}
    public func audioPlayerDecodeErrorDidOccur(_ player: AudioPlayer, error: DecodeProblem) {
        audioPlayerDecodeErrorDidOccur(player, error: error as (any Error)?)
    }
    public func audioPlayerBeginInterruption(_ player: AudioPlayer) {}
    public func audioPlayerEndInterruption(_ player: AudioPlayer, shouldResume: Bool) {
        audioPlayerEndInterruption(player, withOptions: shouldResume ? 1 : 0)
    }
    public func audioPlayerDecodeErrorDidOccur(_ player: AudioPlayer, error: (any Error)?) {}
    public func audioPlayerEndInterruption(_ player: AudioPlayer, withOptions flags: Int) {}
}
