// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization

// MediaPlayer's media library as iOS code uses it (issue 23): queries and collections read the
// user's library without naming it, and the application player is one per process.

public typealias MPMediaLibrary = MediaLibrary
public typealias MPMusicPlaybackState = PlaybackState
public typealias MPMusicRepeatMode = RepeatMode
public typealias MPMusicShuffleMode = ShuffleMode
public typealias MPMediaGrouping = MediaGrouping
public typealias MPMediaPlaylist = MediaPlaylist

/// The libraries ``MediaLibrary/default()`` opened, by path (the default path follows
/// `XDG_DATA_HOME` and `HOME`, read at each call).
private let defaultLibraries = Mutex<[String: MediaLibrary]>([:])

extension MediaLibrary {
    /// `MPMediaLibrary.default()`: the user's library — what `tonearm library scan` fills, at
    /// ``defaultPath`` — opened once per process (an empty library when it was never scanned).
    /// Nil when it cannot be opened (the folder is not writable, the file is not a library): the
    /// reason is logged, as iOS code has no error to read here.
    public static func `default`() -> MediaLibrary? {
        let path = defaultPath
        return defaultLibraries.withLock { libraries in
            if let library = libraries[path] { return library }
            do {
                let library = try MediaLibrary(path: path)
                libraries[path] = library
                return library
            } catch {
                compatLogger.warning("the default media library cannot be opened: \(error)")
                return nil
            }
        }
    }
}

extension MediaQuery {
    /// `MPMediaQuery.items`: the items the query finds in the user's library
    /// (``MediaLibrary/default()``), in the grouping's order; nil when the library cannot be
    /// read (the reason is logged), as iOS gives nil without access to the library.
    public var items: [MediaItem]? {
        guard let library = MediaLibrary.default() else { return nil }
        do { return try items(in: library) } catch {
            compatLogger.warning("MPMediaQuery.items: \(error)")
            return nil
        }
    }

    /// `MPMediaQuery.collections`: the items grouped by ``groupingType`` (albums, artists…) in the
    /// user's library; nil when the library cannot be read.
    public var collections: [MediaItemCollection]? {
        guard let library = MediaLibrary.default() else { return nil }
        do { return try collections(in: library) } catch {
            compatLogger.warning("MPMediaQuery.collections: \(error)")
            return nil
        }
    }
}

extension MediaItemCollection {
    /// `MPMediaItemCollection(items:)`: the items as they are, in their order (a collection of
    /// songs, grouped by title).
    public init(items: [MediaItem]) {
        self.init(items: items, grouping: .title)
    }
}

/// The process's application music player (``MusicPlayer/applicationMusicPlayer``).
private let applicationPlayer = Mutex<MusicPlayer?>(nil)

extension MusicPlayer {
    /// `MPMusicPlayerController.applicationMusicPlayer`: this process's music player — the same
    /// object at every call, made at the first, with the automatic output — whose playback ends
    /// with the process, as the application player's ends with the app. (The system player,
    /// which plays on, is ``MusicPlayer/system``: `tonearm daemon`'s queue.)
    public static var applicationMusicPlayer: MusicPlayer {
        applicationPlayer.withLock { player in
            if let player { return player }
            let made = MusicPlayer()
            player = made
            return made
        }
    }

    /// `setQueue(with: MPMediaQuery)`: the items `query` finds in the user's library
    /// (``MediaLibrary/default()``) become the queue, as ``setQueue(with:in:)`` makes them. As on
    /// iOS nothing is thrown: when the library cannot be read the queue is left empty and the
    /// reason logged.
    public func setQueue(with query: MediaQuery) {
        guard let library = MediaLibrary.default() else {
            setQueue(with: [QueueItem]())
            return
        }
        do { try setQueue(with: query, in: library) } catch {
            compatLogger.warning("setQueue(with: MPMediaQuery): \(error)")
            setQueue(with: [QueueItem]())
        }
    }
}
