// SPDX-License-Identifier: GPL-3.0-or-later
@_exported import Tonearm

// AVFoundation's names over Tonearm's types (issue 23): code written for iOS compiles with
// `import TonearmCompat` in place of `import AVFoundation`. Each name is Tonearm's own type —
// the same object, its Swift-native API beside Apple's — so ported code and Tonearm code mix.
// The differences that remain are in the README's "Coming from iOS" table.

public typealias AVAudioPlayer = AudioPlayer
public typealias AVAudioPlayerDelegate = AudioPlayerDelegate
public typealias AVPlayer = Player
public typealias AVPlayerItem = PlayerItem
public typealias AVAudioEngine = AudioEngine
public typealias AVAudioNode = AudioNode
public typealias AVAudioPlayerNode = AudioPlayerNode
public typealias AVAudioMixerNode = AudioMixerNode
public typealias AVAudioInputNode = AudioInputNode
public typealias AVAudioNodeTapBlock = AudioNodeTapBlock
public typealias AVAudioUnitEQ = AudioUnitEQ
/// Every effect node: on iOS AVAudioUnitEQ is an AVAudioUnitEffect; here the equalizer and the
/// kernel-hosting ``AudioUnitEffect`` are both ``AudioNode``s (what `attach` and `connect`
/// take), so `let effect: AVAudioUnitEffect = eq` holds either.
public typealias AVAudioUnitEffect = AudioNode
public typealias AVAudioFormat = AudioFormat
public typealias AVAudioFile = AudioFile
public typealias AVAudioPCMBuffer = AudioPCMBuffer
public typealias AVAudioTime = AudioTime
public typealias AVAudioFrameCount = AudioFrameCount
public typealias AVAudioFramePosition = AudioFramePosition
public typealias AVAudioSession = AudioSession
/// `AVAsset`: a file (``Asset``, `AVURLAsset`) or a composition (`AVMutableComposition`) —
/// what an export session takes; see ``AVAssetProtocol``.
public typealias AVAsset = AVAssetProtocol
public typealias AVURLAsset = Asset
public typealias AVAssetExportSession = AssetExportSession
public typealias AVAudioRecorder = AudioRecorder
public typealias AVAudioRecorderDelegate = AudioRecorderDelegate
public typealias AVAssetImageGenerator = AssetImageGenerator
public typealias AVPlayerItemVideoOutput = PlayerItemVideoOutput

extension AudioSession {
    /// `AVAudioSession.sharedInstance()`: the process's session, ``AudioSession/shared``, whose
    /// interruptions and route changes are then posted on `NotificationCenter.default` as iOS
    /// posts them (``postNotifications()``).
    public static func sharedInstance() -> AudioSession {
        shared.postNotifications()
        return .shared
    }
}

extension AudioNode {
    /// `AVAudioNode.outputFormat(forBus:)`: every node of an engine renders the engine's format
    /// (its ``AudioEngine/outputFormat``; 48 kHz stereo before the node is attached).
    public func outputFormat(forBus bus: Int) -> AudioFormat {
        engine?.outputFormat ?? .interleavedFloat(sampleRate: 48_000, channels: 2)
    }
}

extension AudioPlayerNode {
    /// `scheduleSegment(_:startingFrame:frameCount:at:completionHandler:)` as AVFoundation has
    /// it: not throwing, the handler without arguments — called once the segment has been
    /// rendered (Apple's argument-less form calls it once the data is consumed, a moment before
    /// it is heard), or by `stop()` on the caller's thread before it returns, as iOS calls it. A range outside the file — an exception that
    /// ends the app on iOS — schedules nothing and calls no handler; Tonearm's own form throws
    /// a typed error saying so.
    public func scheduleSegment(_ file: some PlaybackSource, startingFrame: AudioFramePosition, frameCount: AudioFrameCount,
                                at when: AudioTime?, completionHandler: (@Sendable () -> Void)?) {
        try? scheduleSegment(file, startingFrame: startingFrame, frameCount: frameCount, at: when,
                             completionHandler: completionHandler.map { handler in { @Sendable _ in handler() } })
    }
}
