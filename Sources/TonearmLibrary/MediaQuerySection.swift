// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmCore

/// A run of a listing under one index title (MPMediaQuerySection): "A"–"Z", "#", a letter of
/// another alphabet, a kana row, a Korean initial (see ``SortKey`` for the rule), and the range
/// of indices of the items or collections it covers.
public struct MediaQuerySection: Sendable, Hashable, Codable {
    public var title: String
    public var range: Range<Int>

    public init(title: String, range: Range<Int>) {
        self.title = title
        self.range = range
    }
}

extension MediaQuery {
    /// The sections of ``items(in:)``, in order, covering every index once. Empty when the
    /// query is sorted by something that is not a name (year, duration, play count…).
    /// - Throws: `TonearmError.library` when the database cannot be read.
    public func itemSections(in library: MediaLibrary) throws(TonearmError) -> [MediaQuerySection] {
        sections(ofItems: try items(in: library))
    }

    /// The sections of ``collections(in:)`` (albums by album title, artists by name…).
    /// - Throws: `TonearmError.library` when the database cannot be read.
    public func collectionSections(in library: MediaLibrary) throws(TonearmError) -> [MediaQuerySection] {
        sections(ofCollections: try collections(in: library))
    }

    /// The sections of items this query fetched (so a caller that has them need not fetch
    /// twice). Pure.
    public func sections(ofItems items: [MediaItem]) -> [MediaQuerySection] {
        guard let name = itemName else { return [] }
        return Self.sections(ofNames: items.map(name))
    }

    /// The sections of collections this query made. Pure.
    public func sections(ofCollections collections: [MediaItemCollection]) -> [MediaQuerySection] {
        Self.sections(ofNames: collections.map { $0.name })
    }

    /// The name items are listed by: the sort order's, else the grouping's; nil for an order
    /// that is not by name.
    private var itemName: (@Sendable (MediaItem) -> String?)? {
        switch sortOrder {
        case .title: return { $0.title }
        case .artist: return { $0.artist }
        case .album: return { $0.albumTitle }
        case .some: return nil
        case nil:
            switch groupingType {
            case .title: return { $0.title }
            case .album: return { $0.albumTitle }
            case .artist: return { $0.artist }
            case .albumArtist: return { $0.albumArtistOrArtist }
            case .genre: return { $0.genre }
            case .composer: return { $0.composer }
            case .playlist: return nil
            }
        }
    }

    /// The sections of a list of names already in ``SortKey`` order: consecutive runs of equal
    /// section titles. Pure.
    public static func sections(ofNames names: [String?]) -> [MediaQuerySection] {
        var result: [MediaQuerySection] = []
        for (i, name) in names.enumerated() {
            let title = SortKey.section(of: name)
            if let last = result.last, last.title == title, last.range.upperBound == i {
                result[result.count - 1].range = last.range.lowerBound..<(i + 1)
            } else {
                result.append(MediaQuerySection(title: title, range: i..<(i + 1)))
            }
        }
        return result
    }
}
