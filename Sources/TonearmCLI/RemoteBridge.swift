// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Foundation
import Synchronization
import Tonearm
import TonearmDesktop

/// Connects `tonearm play`'s ``MusicPlayer`` to Now Playing and the remote commands, and exports
/// both over MPRIS (`org.mpris.MediaPlayer2.tonearm`) when a session bus is there: desktop media
/// widgets, media keys and `playerctl` see and drive the player.
///
/// What the session owns is asked of it with ``Request``s (handed to `requests`): the speed
/// (MPRIS `Rate`, kept with the `[`/`]` keys' speed and shown on the screen) and quitting
/// (MPRIS `Quit`). `OpenUri` adds the file or stream to the queue and plays it.
///
/// Threading: command targets run on the MPRIS thread and call the player (thread-safe), except
/// that `OpenUri`'s item is queued and started on a serial queue of the bridge's (a stream
/// connects when it becomes current); ``update(_:)`` is called by the session loop.
final class RemoteBridge: Sendable {
    /// A remote client's request that the session carries out.
    enum Request: Sendable, Equatable {
        /// Play at this speed (0.5…2, pitch kept).
        case setRate(Float)
        /// End the session, as the `q` key does.
        case quit
    }

    /// The speeds a client may set (MPRIS `MinimumRate`…`MaximumRate`), as the `[`/`]` keys.
    static let rates: ClosedRange<Double> = 0.5...2

    let info = NowPlayingInfoCenter()
    let commands = RemoteCommandCenter()
    private let service: MPRISService
    /// The current item's own track number (from its tags), read once per item.
    private let trackNumber = Mutex<(id: UInt64, number: Int?)?>(nil)

    init(player: MusicPlayer, requests: @escaping @Sendable (Request) -> Void) {
        service = MPRISService(busName: "tonearm", identity: "Tonearm", supportedUriSchemes: ["file", "http", "https"],
                               supportedMimeTypes: Self.mimeTypes, infoCenter: info, commandCenter: commands)
        let c = commands
        let opening = DispatchQueue(label: "tonearm.remote.open")
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
        c.changePlaybackRate.supportedPlaybackRates = [Self.rates.lowerBound, 0.75, 1, 1.25, 1.5, Self.rates.upperBound]
        c.changePlaybackRate.addTarget { e in
            guard Self.rates.contains(e.playbackRate) else { return .commandFailed }
            let rate = Float(e.playbackRate)
            if var now = center.nowPlayingInfo {
                now.defaultPlaybackRate = Double(rate)
                if now.playbackRate > 0 { now.playbackRate = Double(rate) }
                center.nowPlayingInfo = now
            }
            requests(.setRate(rate))
            return .success
        }
        c.openURL.addTarget { e in
            let item: QueueItem
            if e.url.isFileURL {
                guard FileManager.default.fileExists(atPath: e.url.path) else { return .noSuchContent }
                item = QueueItem(path: e.url.path)
            } else {
                item = QueueItem(url: e.url)
                guard item.isRemote else { return .commandFailed }
            }
            // Off the MPRIS thread (a stream connects when it becomes current), one open after another.
            opening.async {
                player.queue.append(item)
                player.queue.skipToItem(at: player.queue.items().count - 1)
                player.play()
            }
            return .success
        }
        c.quit.addTarget { _ in requests(.quit); return .success }
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
        /// The speed it plays at (1: normal).
        var rate: Float
    }

    /// Publishes `s` (properties that did not change send nothing).
    func update(_ s: State) {
        if let item = s.item {
            info.nowPlayingInfo = NowPlayingInfo(title: s.title, artist: s.artist, album: s.album, albumArtist: s.albumArtist,
                                                 artwork: s.artwork, duration: s.duration, elapsedTime: s.elapsed,
                                                 playbackRate: s.playing == .playing ? Double(s.rate) : 0, persistentID: item.persistentID,
                                                 queueIndex: s.index, queueCount: s.count, trackURL: item.url,
                                                 defaultPlaybackRate: Double(s.rate), albumTrackNumber: trackNumber(of: item))
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

    /// `item`'s track number from its tags (nil for streams and untagged files), read when the
    /// item is new.
    private func trackNumber(of item: QueueItem) -> Int? {
        if let known = trackNumber.withLock({ $0 }), known.id == item.persistentID { return known.number }
        let number = item.isRemote ? nil : (try? AudioFile(path: item.path))?.metadata.trackNumber
        trackNumber.withLock { $0 = (item.persistentID, number) }
        return number
    }

    /// What `OpenUri` plays (MPRIS `SupportedMimeTypes`).
    static let mimeTypes = ["audio/mpeg", "audio/flac", "audio/x-flac", "audio/ogg", "audio/opus", "audio/x-vorbis+ogg",
                            "audio/vorbis", "audio/mp4", "audio/x-m4a", "audio/aac", "audio/x-wav", "audio/wav",
                            "audio/x-aiff", "audio/aiff", "audio/x-wavpack", "audio/x-ape", "audio/webm",
                            "audio/x-matroska", "audio/ac3", "application/vnd.apple.mpegurl", "audio/x-mpegurl"]
}
