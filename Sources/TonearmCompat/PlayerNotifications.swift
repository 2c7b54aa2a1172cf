// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization

// AVPlayerItem's notifications (posted by every PlayerItem, see PlayerItem.didPlayToEndTimeNotification)
// under their Notification.Name spellings, and MPMusicPlayerController's, which a player posts
// between beginGeneratingPlaybackNotifications() and endGeneratingPlaybackNotifications(), as
// on iOS (issue 23).

extension Notification.Name {
    public static let AVPlayerItemDidPlayToEndTime = PlayerItem.didPlayToEndTimeNotification
    public static let AVPlayerItemFailedToPlayToEndTime = PlayerItem.failedToPlayToEndTimeNotification
    public static let AVPlayerItemPlaybackStalled = PlayerItem.playbackStalledNotification
    public static let AVPlayerItemNewAccessLogEntry = PlayerItem.newAccessLogEntryNotification
    public static let AVPlayerItemNewErrorLogEntry = PlayerItem.newErrorLogEntryNotification
    public static let MPMusicPlayerControllerPlaybackStateDidChange = MusicPlayer.playbackStateDidChangeNotification
    public static let MPMusicPlayerControllerNowPlayingItemDidChange = MusicPlayer.nowPlayingItemDidChangeNotification
    public static let MPMusicPlayerControllerVolumeDidChange = MusicPlayer.volumeDidChangeNotification
}

public let AVPlayerItemDidPlayToEndTimeNotification = PlayerItem.didPlayToEndTimeNotification
public let AVPlayerItemFailedToPlayToEndTimeNotification = PlayerItem.failedToPlayToEndTimeNotification
public let AVPlayerItemFailedToPlayToEndTimeErrorKey = PlayerItem.failedToPlayToEndTimeErrorKey
public let MPMusicPlayerControllerPlaybackStateDidChangeNotification = MusicPlayer.playbackStateDidChangeNotification
public let MPMusicPlayerControllerNowPlayingItemDidChangeNotification = MusicPlayer.nowPlayingItemDidChangeNotification
public let MPMusicPlayerControllerVolumeDidChangeNotification = MusicPlayer.volumeDidChangeNotification

extension MusicPlayer {
    public static let playbackStateDidChangeNotification = Notification.Name("MPMusicPlayerControllerPlaybackStateDidChangeNotification")
    public static let nowPlayingItemDidChangeNotification = Notification.Name("MPMusicPlayerControllerNowPlayingItemDidChangeNotification")
    public static let volumeDidChangeNotification = Notification.Name("MPMusicPlayerControllerVolumeDidChangeNotification")

    /// `beginGeneratingPlaybackNotifications()`: from now on the player's state, item and volume
    /// changes are posted on `NotificationCenter.default` (object: the player), from its
    /// ``events``, until ``endGeneratingPlaybackNotifications()``. Calls nest as on iOS: each
    /// begin needs an end.
    public func beginGeneratingPlaybackNotifications() {
        PlaybackNotifications.shared.begin(self)
    }

    /// `endGeneratingPlaybackNotifications()`: one begin fewer; at none, posting stops.
    public func endGeneratingPlaybackNotifications() {
        PlaybackNotifications.shared.end(self)
    }
}

/// The players posting their notifications: how many begins each has, and the task posting.
final class PlaybackNotifications: Sendable {
    static let shared = PlaybackNotifications()
    private let posting = Mutex<[ObjectIdentifier: (count: Int, task: Task<Void, Never>)]>([:])

    func begin(_ player: MusicPlayer) {
        let id = ObjectIdentifier(player)
        posting.withLock { p in
            if let current = p[id] {
                p[id] = (current.count + 1, current.task)
                return
            }
            // Subscribed now: a change right after this call is posted.
            let events = player.events
            let task = Task.detached { [weak player] in
                for await e in events {
                    guard let player else { return }
                    let name: Notification.Name
                    switch e {
                    case .stateChanged: name = MusicPlayer.playbackStateDidChangeNotification
                    case .currentItemChanged: name = MusicPlayer.nowPlayingItemDidChangeNotification
                    case .volumeChanged: name = MusicPlayer.volumeDidChangeNotification
                    default: continue
                    }
                    NotificationCenter.default.post(name: name, object: player)
                }
            }
            p[id] = (1, task)
        }
    }

    func end(_ player: MusicPlayer) {
        let id = ObjectIdentifier(player)
        let task = posting.withLock { p -> Task<Void, Never>? in
            guard let current = p[id] else { return nil }
            if current.count > 1 {
                p[id] = (current.count - 1, current.task)
                return nil
            }
            p[id] = nil
            return current.task
        }
        task?.cancel()
    }
}
