// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import Tonearm

/// The daemon's MPRIS export (issue 20): the daemon's ``MusicPlayer`` — the queue the MPD
/// protocol drives — published as `org.mpris.MediaPlayer2.tonearm` on the session bus through
/// the same ``RemoteBridge`` as `tonearm play`, so `playerctl`, media keys and desktop widgets
/// see what mpc changed and drive the same queue. What it shows is published again on each of
/// the player's events and volume changes (no polling).
final class DaemonRemote: Sendable {
    private let bridge: RemoteBridge
    private let player: MusicPlayer
    private let tasks = Mutex<[Task<Void, Never>]>([])
    /// The current item's tags, read once per item.
    private let tags = Mutex<(id: UInt64, title: String?, artist: String?, album: String?, albumArtist: String?, duration: Double?)?>(nil)

    private init(player: MusicPlayer) {
        self.player = player
        // The daemon has no speed of its own and is not quit by a desktop widget; songs are
        // added over the MPD protocol, which keeps the queue's ids (not by `OpenUri`).
        bridge = RemoteBridge(player: player) { _ in }
        bridge.commands.changePlaybackRate.isEnabled = false
        bridge.commands.quit.isEnabled = false
        bridge.commands.openURL.isEnabled = false
    }

    /// Starts the export for `player`; returns it with nil, or nil with why not (no session bus).
    static func start(player: MusicPlayer) -> (DaemonRemote?, String?) {
        let remote = DaemonRemote(player: player)
        if let failure = remote.bridge.start() { return (nil, failure) }
        remote.publish()
        let events = player.events, volumes = player.volumeChanges
        let a = Task.detached { [weak remote] in
            for await e in events {
                guard let remote else { return }
                if case .seeked(let t) = e { remote.bridge.didSeek(to: t) }
                remote.publish()
            }
        }
        let b = Task.detached { [weak remote] in
            for await _ in volumes {
                guard let remote else { return }
                remote.publish()
            }
        }
        remote.tasks.withLock { $0 = [a, b] }
        return (remote, nil)
    }

    func stop() {
        for t in tasks.withLock({ $0 }) { t.cancel() }
        bridge.stop()
    }

    private func publish() {
        let item = player.nowPlayingItem
        var t = tags.withLock { $0 }
        if let item, t?.id != item.persistentID {
            var title: String? = item.isRemote ? item.path : item.url.lastPathComponent
            var artist: String?, album: String?, albumArtist: String?, duration: Double?
            if !item.isRemote, let file = try? AudioFile(path: item.path) {
                let md = file.metadata
                title = md.title ?? title
                artist = md.artist
                album = md.album
                albumArtist = md.albumArtist
                duration = file.duration
            }
            t = (item.persistentID, title, artist, album, albumArtist, duration)
            tags.withLock { $0 = t }
        }
        let q = player.queue
        bridge.update(RemoteBridge.State(
            item: item, title: t?.title, artist: t?.artist, album: t?.album, albumArtist: t?.albumArtist, artwork: nil,
            duration: player.queue.currentDuration ?? t?.duration, elapsed: player.currentPlaybackTime, playing: player.playbackState,
            index: player.indexOfNowPlayingItem, count: q.items().count, volume: player.volume, repeatMode: player.repeatMode,
            shuffleMode: player.shuffleMode, rate: 1))
    }
}
