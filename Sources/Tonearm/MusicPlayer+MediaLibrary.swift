// SPDX-License-Identifier: GPL-3.0-or-later
import TonearmCore
import TonearmLibrary
import TonearmPlayback

/// Playing what the media library finds (`MPMusicPlayerController.setQueue(with: MPMediaQuery)`
/// and `setQueue(with: MPMediaItemCollection)`). Here, in the umbrella module, because the
/// library and the players do not depend on each other.
extension MusicPlayer {
    /// Makes the items `query` finds in `library` the queue, each keeping its library
    /// `persistentID`: grouped queries in their collections' order (an album in disc and track
    /// order, an artist's albums by year), others in the query's item order. Stops playback.
    /// - Throws: ``TonearmError/library(path:reason:)`` when the database cannot be read.
    /// - Returns: how many items were queued.
    @discardableResult
    public func setQueue(with query: MediaQuery, in library: MediaLibrary) throws(TonearmError) -> Int {
        let items: [MediaItem]
        if query.groupingType == .title || query.sortOrder != nil {
            items = try query.items(in: library)
        } else {
            items = try query.collections(in: library).flatMap(\.items)
        }
        setQueue(with: items.map { QueueItem(path: $0.path, persistentID: $0.persistentID) })
        return items.count
    }

    /// Makes `collection`'s items the queue, in its order. Stops playback.
    public func setQueue(with collection: MediaItemCollection) {
        setQueue(with: collection.items.map { QueueItem(path: $0.path, persistentID: $0.persistentID) })
    }
}
