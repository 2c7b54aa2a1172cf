// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmCore

/// What is playing now: the counterpart of `MPNowPlayingInfoCenter.nowPlayingInfo`, as a value
/// with typed fields instead of a `[String: Any]` dictionary (no mistyped keys, no `NSNumber`
/// for the persistent ID, no forgotten elapsed time).
///
/// The elapsed time is a snapshot: it is `elapsedTime` at the moment the info was handed to the
/// ``NowPlayingInfoCenter``, and readers extrapolate it with `playbackRate` (see
/// ``NowPlayingInfoCenter/elapsedTime(at:)``). A player sets it again only when the position
/// jumps (seek, new track) or the rate changes, not on every tick.
public struct NowPlayingInfo: Sendable, Hashable {
    /// The track's title.
    public var title: String?
    /// The track's artist.
    public var artist: String?
    /// The album's title.
    public var album: String?
    /// The album's artist (for compilations, "Various Artists" and the like).
    public var albumArtist: String?
    /// Embedded cover art (bytes and MIME type), as read from the file's tags.
    public var artwork: Artwork?
    /// The track's length in seconds; nil for streams of unknown length.
    public var duration: Double?
    /// The position in seconds when this value was set.
    public var elapsedTime: Double
    /// The playback rate (1 is normal speed; 0 while paused).
    public var playbackRate: Double
    /// The rate playback goes at when it plays (`MPNowPlayingInfoPropertyDefaultPlaybackRate`):
    /// the speed the player is set to, also while paused (MPRIS `Rate`).
    public var defaultPlaybackRate: Double
    /// The track's number on its album, from its tags (`MPMediaItemPropertyAlbumTrackNumber`;
    /// MPRIS `xesam:trackNumber`); nil when unknown — not its place in the queue.
    public var albumTrackNumber: Int?
    /// A number identifying the track (stable for the same item in the same queue).
    public var persistentID: UInt64
    /// The track's index in the play queue (0-based), when there is a queue.
    public var queueIndex: Int?
    /// The number of items in the play queue, when there is a queue.
    public var queueCount: Int?
    /// Where the track is read from.
    public var trackURL: URL?

    public init(title: String? = nil, artist: String? = nil, album: String? = nil, albumArtist: String? = nil,
                artwork: Artwork? = nil, duration: Double? = nil, elapsedTime: Double = 0, playbackRate: Double = 1,
                persistentID: UInt64 = 0, queueIndex: Int? = nil, queueCount: Int? = nil, trackURL: URL? = nil,
                defaultPlaybackRate: Double = 1, albumTrackNumber: Int? = nil) {
        self.title = title
        self.artist = artist
        self.album = album
        self.albumArtist = albumArtist
        self.artwork = artwork
        self.duration = duration
        self.elapsedTime = elapsedTime
        self.playbackRate = playbackRate
        self.persistentID = persistentID
        self.queueIndex = queueIndex
        self.queueCount = queueCount
        self.trackURL = trackURL
        self.defaultPlaybackRate = defaultPlaybackRate
        self.albumTrackNumber = albumTrackNumber
    }
}

/// The playback state reported to the system (`MPNowPlayingPlaybackState`).
public enum NowPlayingPlaybackState: Sendable, Hashable {
    case unknown, playing, paused, stopped, interrupted
}

/// How the queue repeats (`MPRepeatType`): MPRIS calls these None, Track and Playlist.
public enum RepeatType: Sendable, Hashable, CaseIterable {
    case none, one, all
}

/// How the queue is shuffled (`MPShuffleType`): MPRIS only knows on (songs) and off.
public enum ShuffleType: Sendable, Hashable, CaseIterable {
    case off, songs, albums
}
