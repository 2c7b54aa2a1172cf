// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Foundation
import Synchronization
import Tonearm
import TonearmDesktop

/// Connects `tonearm play`'s player — the ``MusicPlayer`` of local playback (``PlaySession``) or
/// the ``Player`` of a network stream (``StreamSession``) — to Now Playing and the remote
/// commands, and exports both over MPRIS (`org.mpris.MediaPlayer2.tonearm`) when a session bus is
/// there: desktop media widgets, media keys and `playerctl` see and drive the player. Both get the
/// same transport commands (play, pause, play-pause, stop, position, volume) through a
/// ``RemoteTransport``; the queue's commands (next, previous, repeat, shuffle, speed, skip,
/// `OpenUri`, `Quit`) are wired for local playback only.
///
/// What the local session owns is asked of it with ``Request``s (handed to `requests`): the speed
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
    /// What the transport commands drive; the session's play/pause key uses it too.
    let transport: RemoteTransport
    private let service: MPRISService
    /// The current item's own track number (from its tags), read once per item.
    private let trackNumber = Mutex<(id: UInt64, number: Int?)?>(nil)

    /// The service and the transport commands, for either player; `opensURIs`: the local
    /// player's `OpenUri` (files and http(s) streams, ``mimeTypes``), else MPRIS's defaults.
    /// `takesOver`: a video's bridge, which takes the `tonearm` name from a music player for as
    /// long as it runs (``MPRISService``'s `takesOverName`).
    private init(transport: RemoteTransport, opensURIs: Bool, takesOver: Bool = false) {
        self.transport = transport
        service = opensURIs
            ? MPRISService(busName: "tonearm", identity: "Tonearm", supportedUriSchemes: ["file", "http", "https"],
                           supportedMimeTypes: Self.mimeTypes, infoCenter: info, commandCenter: commands)
            : MPRISService(busName: "tonearm", identity: "Tonearm", infoCenter: info, commandCenter: commands,
                           takesOverName: takesOver)
        let c = commands
        c.play.addTarget { _ in transport.play(); return .success }
        c.pause.addTarget { _ in transport.pause(); return .success }
        c.togglePlayPause.addTarget { _ in transport.togglePlayPause(); return .success }
        c.stop.addTarget { _ in transport.stop(); return .success }
        c.changePlaybackPosition.addTarget { e in
            guard transport.hasItem() else { return .noActionableNowPlayingItem }
            transport.seek(e.positionTime)
            return .success
        }
        let center = info
        c.changeVolume.addTarget { e in
            transport.setVolume(Float(e.volume))
            center.volume = Double(transport.volume())
            return .success
        }
        c.seekForward.isEnabled = false
        c.seekBackward.isEnabled = false
    }

    /// A network stream's or a video's bridge: the transport commands only (a stream has no
    /// queue, repeat, shuffle or speed of its own here). A video (`video`) takes the `tonearm`
    /// name over from a music player while it plays: the desktop's controls reach the video, and
    /// the music player's again once the video's process ends.
    convenience init(stream player: Player, video: Bool = false) {
        self.init(transport: .stream(player), opensURIs: false, takesOver: video)
        let c = commands
        c.nextTrack.isEnabled = false
        c.previousTrack.isEnabled = false
        c.changeRepeatMode.isEnabled = false
        c.changeShuffleMode.isEnabled = false
        c.changePlaybackRate.isEnabled = false
    }

    /// Local playback's bridge: the transport commands and the queue's.
    convenience init(player: MusicPlayer, requests: @escaping @Sendable (Request) -> Void) {
        self.init(transport: .queue(player), opensURIs: true)
        let c = commands
        let opening = DispatchQueue(label: "tonearm.remote.open")
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

    /// Publishes what plays, whether it plays, and the volume (properties that did not change
    /// send nothing). A stream's session calls this; ``update(_:)`` for local playback.
    func publish(_ now: NowPlayingInfo?, state: NowPlayingPlaybackState, volume: Float) {
        info.nowPlayingInfo = now
        info.playbackState = state
        info.volume = Double(volume)
    }

    /// Publishes `s` (properties that did not change send nothing).
    func update(_ s: State) {
        let now = s.item.map { item in
            NowPlayingInfo(title: s.title, artist: s.artist, album: s.album, albumArtist: s.albumArtist,
                           artwork: s.artwork, duration: s.duration, elapsedTime: s.elapsed,
                           playbackRate: s.playing == .playing ? Double(s.rate) : 0, persistentID: item.persistentID,
                           queueIndex: s.index, queueCount: s.count, trackURL: item.url,
                           defaultPlaybackRate: Double(s.rate), albumTrackNumber: trackNumber(of: item))
        }
        let state: NowPlayingPlaybackState = switch s.playing {
        case .playing: .playing
        case .paused: .paused
        case .stopped: .stopped
        case .interrupted: .interrupted
        }
        publish(now, state: state, volume: s.volume)
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

/// The transport a remote control drives, the same for both players: the local queue's
/// ``MusicPlayer`` and a stream's ``Player``. Also what the sessions' play/pause key does.
struct RemoteTransport: Sendable {
    var isPlaying: @Sendable () -> Bool
    var play: @Sendable () -> Void
    var pause: @Sendable () -> Void
    var stop: @Sendable () -> Void
    /// Whether there is an item to move in (``seek``).
    var hasItem: @Sendable () -> Bool
    var seek: @Sendable (Double) -> Void
    var volume: @Sendable () -> Float
    var setVolume: @Sendable (Float) -> Void

    /// Pauses when playing, else plays.
    func togglePlayPause() {
        if isPlaying() { pause() } else { play() }
    }

    static func queue(_ player: MusicPlayer) -> RemoteTransport {
        // Waiting to play on when the sound server is back counts as playing: the key pauses it.
        RemoteTransport(isPlaying: { player.playbackState == .playing || player.isWaitingForOutput }, play: { player.play() }, pause: { player.pause() },
                        stop: { player.stop() }, hasItem: { player.nowPlayingItem != nil },
                        seek: { player.currentPlaybackTime = $0 },
                        volume: { player.volume }, setVolume: { player.volume = $0 })
    }

    /// A stream has no stop of its own: stopping pauses it (the connection stays).
    static func stream(_ player: Player) -> RemoteTransport {
        RemoteTransport(isPlaying: { player.rate != 0 }, play: { player.play() }, pause: { player.pause() },
                        stop: { player.pause() }, hasItem: { true },
                        seek: { player.seek(to: $0) { _ in } },
                        volume: { player.volume }, setVolume: { player.volume = $0 })
    }
}
