// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Tonearm

/// Connects `tonearm play`'s ``MusicPlayer`` to Now Playing and the remote commands, and exports
/// both over MPRIS (`org.mpris.MediaPlayer2.tonearm`) when a session bus is there: desktop media
/// widgets, media keys and `playerctl` see and drive the player.
///
/// Threading: command targets run on the MPRIS thread and call the player (thread-safe);
/// ``update(_:)`` is called by the session loop.
final class RemoteBridge: Sendable {
    let info = NowPlayingInfoCenter()
    let commands = RemoteCommandCenter()
    private let service: MPRISService

    init(player: MusicPlayer) {
        service = MPRISService(busName: "tonearm", identity: "Tonearm", infoCenter: info, commandCenter: commands)
        let c = commands
        c.play.addTarget { _ in player.play(); return .success }
        c.pause.addTarget { _ in player.pause(); return .success }
        c.togglePlayPause.addTarget { _ in
            if player.playbackState == .playing { player.pause() } else { player.play() }
            return .success
        }
        c.stop.addTarget { _ in player.stop(); return .success }
        c.nextTrack.addTarget { _ in
            guard player.nowPlayingItem != nil else { return .noSuchContent }
            player.skipToNextItem()
            return .success
        }
        c.previousTrack.addTarget { _ in
            guard player.nowPlayingItem != nil else { return .noSuchContent }
            player.skipToPreviousItem()
            return .success
        }
        c.changePlaybackPosition.addTarget { e in
            guard player.nowPlayingItem != nil else { return .noActionableNowPlayingItem }
            player.currentPlaybackTime = e.positionTime
            return .success
        }
        c.skipForward.addTarget { e in player.currentPlaybackTime += e.interval; return .success }
        c.skipBackward.addTarget { e in player.currentPlaybackTime = max(0, player.currentPlaybackTime - e.interval); return .success }
        // Settings are published at once as well as by the next update, so that a client reading
        // the property right after setting it sees the new value.
        let center = info
        c.changeRepeatMode.addTarget { e in
            switch e.repeatType {
            case .none: player.repeatMode = .none
            case .one: player.repeatMode = .one
            case .all: player.repeatMode = .all
            }
            center.repeatType = e.repeatType
            return .success
        }
        c.changeShuffleMode.addTarget { e in
            switch e.shuffleType {
            case .off: player.shuffleMode = .off
            case .songs: player.shuffleMode = .songs
            case .albums: player.shuffleMode = .albums
            }
            center.shuffleType = e.shuffleType
            return .success
        }
        c.changeVolume.addTarget { e in
            player.volume = Float(e.volume)
            center.volume = Double(player.volume)
            return .success
        }
        c.changePlaybackRate.isEnabled = false
        c.seekForward.isEnabled = false
        c.seekBackward.isEnabled = false
    }

    /// Starts the MPRIS export; returns why it could not (no session bus), or nil.
    func start() -> String? {
        do { try service.start(); return nil } catch { return "MPRIS: \(error)" }
    }

    func stop() { service.stop() }

    /// What the session shows, for Now Playing.
    struct State {
        var item: QueueItem?
        var title: String?
        var artist: String?
        var album: String?
        var albumArtist: String?
        var artwork: Artwork?
        var duration: Double?
        var elapsed: Double
        var playing: PlaybackState
        var index: Int?
        var count: Int
        var volume: Float
        var repeatMode: RepeatMode
        var shuffleMode: ShuffleMode
    }

    /// Publishes `s` (properties that did not change send nothing).
    func update(_ s: State) {
        if let item = s.item {
            info.nowPlayingInfo = NowPlayingInfo(title: s.title, artist: s.artist, album: s.album, albumArtist: s.albumArtist,
                                                 artwork: s.artwork, duration: s.duration, elapsedTime: s.elapsed,
                                                 playbackRate: s.playing == .playing ? 1 : 0, persistentID: item.persistentID,
                                                 queueIndex: s.index, queueCount: s.count, trackURL: item.url)
        } else {
            info.nowPlayingInfo = nil
        }
        switch s.playing {
        case .playing: info.playbackState = .playing
        case .paused: info.playbackState = .paused
        case .stopped: info.playbackState = .stopped
        case .interrupted: info.playbackState = .interrupted
        }
        info.volume = Double(s.volume)
        switch s.repeatMode {
        case .none: info.repeatType = .none
        case .one: info.repeatType = .one
        case .all: info.repeatType = .all
        }
        switch s.shuffleMode {
        case .off: info.shuffleType = .off
        case .songs: info.shuffleType = .songs
        case .albums: info.shuffleType = .albums
        }
    }

    func didSeek(to seconds: Double) { info.didSeek(to: seconds) }
}
