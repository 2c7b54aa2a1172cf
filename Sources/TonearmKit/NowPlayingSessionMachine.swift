// SPDX-License-Identifier: GPL-3.0-or-later

/// The rules of ``NowPlayingSession``: when a video player takes the audio session, the remote
/// commands and Now Playing from the music player, and when it gives them back.
///
/// - A player that starts playing an item with video (or whose playing item turns out to have
///   video once loaded) sets its audio session to ``AudioSession/Category/playback`` with
///   ``AudioSession/Mode/moviePlayback``, activates it — which interrupts a non-mixable music
///   session — and takes the remote commands and Now Playing (an owner pushed on both centers).
///   Audio-only items take nothing.
/// - Pausing keeps all three (as on iOS: a paused video still owns the controls; the desktop's
///   play resumes the video, the music stays interrupted).
/// - The item's end, its failure, a new item without video, or closing (the window closed, the
///   session invalidated or released) gives them back: the session deactivates with
///   `notifyOthersOnDeactivation` (an interrupted music player resumes) and the owners are
///   released (the commands and Now Playing are the music player's again). Playing a video again
///   after its end takes them again; after closing nothing is taken any more.
/// - An interruption of the video's session (another session took over) pauses a playing video;
///   its end with `shouldResume` activates the session again and plays on.
///
/// A pure value: the player's and the session's events in, actions out; no threads, no player.
struct NowPlayingSessionMachine: Sendable, Equatable {
    enum Input: Sendable, Equatable {
        /// The current item changed or loaded: whether it has video (nil: not known yet, it
        /// loads; a missing item is `false`).
        case item(hasVideo: Bool?)
        /// The player's rate became non-zero (`true`) or 0.
        case rate(playing: Bool)
        /// The item's position or metadata changed (a seek, the item ready): Now Playing is due.
        case itemUpdated
        /// The item played to its end.
        case playedToEnd
        /// The item failed (to load or to play on).
        case failed
        case interruptionBegan
        case interruptionEnded(shouldResume: Bool)
        /// The window closed, or the session was invalidated or released. Final.
        case closed
    }

    enum Action: Sendable, Equatable {
        /// Set the session to `.playback` with `.moviePlayback`, keeping the options the app gave
        /// `.playback` (none: exclusive, interrupting non-mixable music).
        case setMoviePlaybackCategory
        case activateSession
        /// Deactivate with `notifyOthersOnDeactivation`.
        case deactivateSession
        /// Push owners on the command and now-playing centers and add the player's targets.
        case takeRemoteControl
        /// Release both owners.
        case giveBackRemoteControl
        /// Publish the player's item, position and rate to Now Playing (the owner's).
        case publishNowPlaying
        case pausePlayer
        case resumePlayer
    }

    /// Whether the current item has video (false while unknown).
    private(set) var hasVideo = false
    private(set) var playing = false
    /// Whether this session holds the remote commands and Now Playing.
    private(set) var ownsRemoteControl = false
    /// Whether the audio session is active (as far as this machine made it).
    private(set) var sessionActive = false
    /// Whether an interruption paused the player (it plays on at the end with `shouldResume`).
    private(set) var pausedByInterruption = false
    private(set) var isClosed = false

    mutating func handle(_ input: Input) -> [Action] {
        guard !isClosed else { return [] }
        switch input {
        case .item(let video):
            if let video { hasVideo = video }
            if video == false, ownsRemoteControl { return letGo() }
            if video == true, playing, !ownsRemoteControl { return take() }
            return ownsRemoteControl ? [.publishNowPlaying] : []
        case .rate(let nowPlaying):
            playing = nowPlaying
            guard nowPlaying else { return ownsRemoteControl ? [.publishNowPlaying] : [] }
            pausedByInterruption = false
            if hasVideo, !ownsRemoteControl { return take() }
            guard ownsRemoteControl else { return [] }
            if !sessionActive {
                sessionActive = true
                return [.activateSession, .publishNowPlaying]
            }
            return [.publishNowPlaying]
        case .itemUpdated:
            return ownsRemoteControl ? [.publishNowPlaying] : []
        case .playedToEnd, .failed:
            playing = false
            pausedByInterruption = false
            return ownsRemoteControl ? letGo() : []
        case .interruptionBegan:
            sessionActive = false
            guard playing, ownsRemoteControl else { return [] }
            pausedByInterruption = true
            return [.pausePlayer]
        case .interruptionEnded(let shouldResume):
            guard pausedByInterruption else { return [] }
            pausedByInterruption = false
            guard shouldResume, ownsRemoteControl else { return [] }
            sessionActive = true
            return [.activateSession, .resumePlayer]
        case .closed:
            isClosed = true
            playing = false
            pausedByInterruption = false
            return ownsRemoteControl ? letGo() : []
        }
    }

    private mutating func take() -> [Action] {
        ownsRemoteControl = true
        sessionActive = true
        return [.setMoviePlaybackCategory, .activateSession, .takeRemoteControl, .publishNowPlaying]
    }

    private mutating func letGo() -> [Action] {
        ownsRemoteControl = false
        pausedByInterruption = false
        var actions: [Action] = []
        if sessionActive { actions.append(.deactivateSession) }
        sessionActive = false
        actions.append(.giveBackRemoteControl)
        return actions
    }
}
