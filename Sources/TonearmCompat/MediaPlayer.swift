// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization

// MediaPlayer's names over Tonearm's types (issue 23).

public typealias MPMusicPlayerController = MusicPlayer
public typealias MPMediaQuery = MediaQuery
public typealias MPMediaItem = MediaItem
public typealias MPMediaItemCollection = MediaItemCollection
public typealias MPNowPlayingInfoCenter = NowPlayingInfoCenter
public typealias MPRemoteCommandCenter = RemoteCommandCenter

extension NowPlayingInfoCenter {
    /// `MPNowPlayingInfoCenter.default()`: the process's center, ``NowPlayingInfoCenter/default``,
    /// published on the desktop as iOS shows it on the lock screen (``DesktopPublishing``).
    public static func `default`() -> NowPlayingInfoCenter {
        DesktopPublishing.shared.ensurePublished()
        return .default
    }
}

extension RemoteCommandCenter {
    /// `MPRemoteCommandCenter.shared()`: the process's command center, whose commands the
    /// desktop's controls, media keys and `playerctl` send (``DesktopPublishing``).
    public static func shared() -> RemoteCommandCenter {
        DesktopPublishing.shared.ensurePublished()
        return .shared
    }
}

// Audio Services' system sounds (AudioToolbox): an id per loaded sound, played and disposed
// by id. The ids are this process's, handed out from 1; a sound keeps its decoded samples and
// its warm output until it is disposed.

/// `SystemSoundID`: a loaded system sound's number.
public typealias SystemSoundID = UInt32
/// `OSStatus`: 0 for success, as Audio Services return it.
public typealias OSStatus = Int32

/// The sounds loaded by ``AudioServicesCreateSystemSoundID(_:_:)``, by id.
private final class SystemSoundTable: Sendable {
    static let shared = SystemSoundTable()
    private let state = Mutex<(next: SystemSoundID, sounds: [SystemSoundID: SystemSound])>((1, [:]))

    func add(_ sound: SystemSound) -> SystemSoundID {
        state.withLock { s in
            let id = s.next
            s.next += 1
            s.sounds[id] = sound
            return id
        }
    }

    func sound(_ id: SystemSoundID) -> SystemSound? { state.withLock { $0.sounds[id] } }
    func remove(_ id: SystemSoundID) -> SystemSound? { state.withLock { $0.sounds.removeValue(forKey: id) } }
}

/// Audio Services' error for an id that names no loaded sound (`kAudioServicesBadSpecifierError`).
public let kAudioServicesBadSpecifierError: OSStatus = 0x77686174  // 'what'
/// Audio Services' error for a file it cannot load (`kAudioServicesUnsupportedPropertyError` is
/// Apple's nearest; the reason is in ``SystemSound``'s thrown error).
public let kAudioServicesSystemSoundUnspecifiedError: OSStatus = -1500

/// Loads the sound at `url` and gives its id (`AudioServicesCreateSystemSoundID`): 0 on success,
/// ``kAudioServicesSystemSoundUnspecifiedError`` when the file cannot be loaded or is longer
/// than a system sound may be (``SystemSound/maximumDuration``).
@discardableResult
public func AudioServicesCreateSystemSoundID(_ url: URL, _ outSystemSoundID: UnsafeMutablePointer<SystemSoundID>) -> OSStatus {
    guard let sound = try? SystemSound(contentsOf: url) else { return kAudioServicesSystemSoundUnspecifiedError }
    outSystemSoundID.pointee = SystemSoundTable.shared.add(sound)
    return 0
}

/// Plays the sound `id` (`AudioServicesPlaySystemSound`); an unknown id does nothing, as on iOS.
public func AudioServicesPlaySystemSound(_ id: SystemSoundID) {
    SystemSoundTable.shared.sound(id)?.play()
}

/// Plays the sound `id` and calls `completion` when it has played
/// (`AudioServicesPlaySystemSoundWithCompletion`).
public func AudioServicesPlaySystemSoundWithCompletion(_ id: SystemSoundID, _ completion: (@Sendable () -> Void)?) {
    guard let sound = SystemSoundTable.shared.sound(id) else {
        completion?()
        return
    }
    sound.play(completion: completion)
}

/// Plays the sound `id` as an alert (`AudioServicesPlayAlertSound`): the sound, and the
/// desktop's notification where iOS would vibrate (``SystemSound/playAlert(completion:)``); an
/// unknown id does nothing.
public func AudioServicesPlayAlertSound(_ id: SystemSoundID) {
    _ = SystemSoundTable.shared.sound(id)?.playAlert()
}

/// `CFURL`, as `AudioServicesCreateSystemSoundID(url as CFURL, &id)` casts to it: Foundation's
/// `URL` here (Linux's Foundation has no CoreFoundation types), so the cast is the URL itself.
public typealias CFURL = URL

/// Frees the sound `id` (`AudioServicesDisposeSystemSoundID`): 0, or
/// ``kAudioServicesBadSpecifierError`` for an id that names no loaded sound.
@discardableResult
public func AudioServicesDisposeSystemSoundID(_ id: SystemSoundID) -> OSStatus {
    SystemSoundTable.shared.remove(id) == nil ? kAudioServicesBadSpecifierError : 0
}

/// `MPRemoteCommandHandlerStatus`, `MPRemoteCommandEvent` and the events with a payload.
public typealias MPRemoteCommandHandlerStatus = RemoteCommandHandlerStatus
public typealias MPRemoteCommandEvent = RemoteCommandEvent
public typealias MPChangePlaybackPositionCommandEvent = ChangePlaybackPositionCommandEvent
public typealias MPSkipIntervalCommandEvent = SkipIntervalCommandEvent
public typealias MPSeekCommandEvent = SeekCommandEvent
public typealias MPChangeRepeatModeCommandEvent = ChangeRepeatModeCommandEvent
public typealias MPChangeShuffleModeCommandEvent = ChangeShuffleModeCommandEvent
public typealias MPChangePlaybackRateCommandEvent = ChangePlaybackRateCommandEvent
public typealias MPRemoteCommand = RemoteCommand

extension RemoteCommandCenter {
    // MPRemoteCommandCenter's names for its commands.
    public var playCommand: RemoteCommand<RemoteCommandEvent> { play }
    public var pauseCommand: RemoteCommand<RemoteCommandEvent> { pause }
    public var togglePlayPauseCommand: RemoteCommand<RemoteCommandEvent> { togglePlayPause }
    public var stopCommand: RemoteCommand<RemoteCommandEvent> { stop }
    public var nextTrackCommand: RemoteCommand<RemoteCommandEvent> { nextTrack }
    public var previousTrackCommand: RemoteCommand<RemoteCommandEvent> { previousTrack }
    public var changePlaybackPositionCommand: RemoteCommand<ChangePlaybackPositionCommandEvent> { changePlaybackPosition }
    public var skipForwardCommand: RemoteCommand<SkipIntervalCommandEvent> { skipForward }
    public var skipBackwardCommand: RemoteCommand<SkipIntervalCommandEvent> { skipBackward }
    public var seekForwardCommand: RemoteCommand<SeekCommandEvent> { seekForward }
    public var seekBackwardCommand: RemoteCommand<SeekCommandEvent> { seekBackward }
    public var changeRepeatModeCommand: RemoteCommand<ChangeRepeatModeCommandEvent> { changeRepeatMode }
    public var changeShuffleModeCommand: RemoteCommand<ChangeShuffleModeCommandEvent> { changeShuffleMode }
    public var changePlaybackRateCommand: RemoteCommand<ChangePlaybackRateCommandEvent> { changePlaybackRate }
}

extension RemoteCommand {
    /// `addTarget(handler:)` as MPRemoteCommand has it: the handler gets the event as Apple's
    /// base type — here `any Sendable`, the command's event — which iOS code casts to the
    /// command's own (`if let event = event as? MPChangePlaybackPositionCommandEvent`); with
    /// Tonearm's ``addTarget(owner:_:)`` the event is typed already and that cast is a warning.
    /// A closure that uses the event as the typed one (`event.positionTime`) picks Tonearm's.
    /// Called as Tonearm's is (see ``addTarget(owner:_:)``); the token is what `removeTarget(_:)` takes.
    @discardableResult
    public func addTarget(handler: @escaping @Sendable (any Sendable) -> RemoteCommandHandlerStatus) -> RemoteCommandTarget {
        addTarget(owner: nil) { (event: Event) in handler(event) }
    }

    /// `removeTarget(_:)` as MPRemoteCommand has it: the token `addTarget` returned, kept as
    /// `Any`; nil removes every target, as Apple documents ("Specify nil to remove all
    /// targets" — the reset that seed 004 does before setting its commands again); anything
    /// else removes nothing.
    public func removeTarget(_ target: Any?) {
        guard let target else { return removeAllTargets() }
        if let target = target as? RemoteCommandTarget { removeTarget(target) }
    }
}
