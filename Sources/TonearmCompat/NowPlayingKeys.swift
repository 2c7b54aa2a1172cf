// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

// The now-playing dictionary's keys (MediaPlayer), read into Tonearm's typed `NowPlayingInfo`:
// iOS code that fills `MPNowPlayingInfoCenter.default().nowPlayingInfo` with a dictionary
// literal, or edits a copy by key, compiles as it is. The values are checked by type as they go
// in: a value of the wrong type for its key, or a key Tonearm does not show, is left out, as
// iOS leaves out what it cannot use. (A `[String: Any]` variable or an `NSDictionary` is wrapped,
// `NowPlayingInfo(dictionary)`: Swift converts a literal, not a dictionary.)

public let MPMediaItemPropertyTitle = "title"
public let MPMediaItemPropertyArtist = "artist"
public let MPMediaItemPropertyAlbumTitle = "albumTitle"
public let MPMediaItemPropertyAlbumArtist = "albumArtist"
public let MPMediaItemPropertyArtwork = "artwork"
public let MPMediaItemPropertyPlaybackDuration = "playbackDuration"
public let MPMediaItemPropertyAlbumTrackNumber = "albumTrackNumber"
public let MPMediaItemPropertyPersistentID = "persistentID"
public let MPNowPlayingInfoPropertyElapsedPlaybackTime = "MPNowPlayingInfoPropertyElapsedPlaybackTime"
public let MPNowPlayingInfoPropertyPlaybackRate = "MPNowPlayingInfoPropertyPlaybackRate"
public let MPNowPlayingInfoPropertyDefaultPlaybackRate = "MPNowPlayingInfoPropertyDefaultPlaybackRate"
public let MPNowPlayingInfoPropertyPlaybackQueueIndex = "MPNowPlayingInfoPropertyPlaybackQueueIndex"
public let MPNowPlayingInfoPropertyPlaybackQueueCount = "MPNowPlayingInfoPropertyPlaybackQueueCount"
public let MPNowPlayingInfoPropertyAssetURL = "MPNowPlayingInfoPropertyAssetURL"

/// `MPMediaItemArtwork`: the cover's bytes and type (Linux has no UIImage; the desktop shows the
/// bytes).
public typealias MPMediaItemArtwork = Artwork

extension NowPlayingInfo: ExpressibleByDictionaryLiteral {
    /// `[MPMediaItemPropertyTitle: "…", MPNowPlayingInfoPropertyPlaybackRate: 1.0, …]`.
    public init(dictionaryLiteral elements: (String, Any)...) {
        self.init(title: nil)
        for (key, value) in elements { self[key] = value }
    }

    /// The info of a `[String: Any]` variable, for `nowPlayingInfo = NowPlayingInfo(dictionary)`
    /// (Swift converts a literal to the typed info, not a variable). Keys and values as the
    /// literal's.
    public init(_ dictionary: [String: Any]) {
        self.init(title: nil)
        for (key, value) in dictionary { self[key] = value }
    }

    /// The info of an `NSDictionary` (an `NSMutableDictionary` filled by key, as Objective-C code
    /// builds it). What is copied is what the dictionary holds now: editing it afterwards — which
    /// crashed iOS apps, the center enumerating it on a thread of its own — changes nothing of
    /// the info. String keys only; `NSString` and `NSNumber` values are read as Swift's.
    public init(_ dictionary: NSDictionary) {
        self.init(title: nil)
        for (key, value) in dictionary {
            guard let key = (key as? String) ?? (key as? NSString).map({ String($0) }) else { continue }
            if let s = value as? NSString, !(value is String) {
                self[key] = String(s)
            } else {
                self[key] = value
            }
        }
    }

    /// The value of a now-playing key (nil when unset); setting a value of the wrong type for
    /// the key, or nil, clears it (the rates and the elapsed time go back to their defaults).
    public subscript(key: String) -> Any? {
        get {
            switch key {
            case MPMediaItemPropertyTitle: title
            case MPMediaItemPropertyArtist: artist
            case MPMediaItemPropertyAlbumTitle: album
            case MPMediaItemPropertyAlbumArtist: albumArtist
            case MPMediaItemPropertyArtwork: artwork
            case MPMediaItemPropertyPlaybackDuration: duration
            case MPMediaItemPropertyAlbumTrackNumber: albumTrackNumber
            case MPMediaItemPropertyPersistentID: persistentID
            case MPNowPlayingInfoPropertyElapsedPlaybackTime: elapsedTime
            case MPNowPlayingInfoPropertyPlaybackRate: playbackRate
            case MPNowPlayingInfoPropertyDefaultPlaybackRate: defaultPlaybackRate
            case MPNowPlayingInfoPropertyPlaybackQueueIndex: queueIndex
            case MPNowPlayingInfoPropertyPlaybackQueueCount: queueCount
            case MPNowPlayingInfoPropertyAssetURL: trackURL
            default: nil
            }
        }
        set {
            func number() -> Double? {
                switch newValue {
                case let d as Double: d
                case let f as Float: Double(f)
                case let i as Int: Double(i)
                case let n as NSNumber: n.doubleValue
                default: nil
                }
            }
            /// A whole number that fits (a count, an index): NaN, an infinity or a value past
            /// `Int`'s range is not one (converting it would trap).
            func whole() -> Int? {
                guard let d = number(), d.isFinite, abs(d) < 9.0e15 else { return nil }
                return Int(d)
            }
            /// A persistent ID: an unsigned 64-bit number (`NSNumber` on iOS). A string, which iOS
            /// takes and passes on to what reads it (the post's car stereos then crash), is left
            /// out and said (a number the desktop can trust, or none).
            func identifier() -> UInt64 {
                if let id = newValue as? UInt64 { return id }
                if let n = newValue as? NSNumber, !(newValue is Double || newValue is Float) { return n.uint64Value }
                if let d = number(), d.isFinite, d >= 0, d < 1.8e19 { return UInt64(d) }
                if let newValue {
                    compatLogger.warning("nowPlayingInfo: MPMediaItemPropertyPersistentID must be a number from 0 to 2⁶⁴−1 (UInt64), not \(type(of: newValue)) \(String(reflecting: newValue)): left out")
                }
                return 0
            }
            switch key {
            case MPMediaItemPropertyTitle: title = newValue as? String
            case MPMediaItemPropertyArtist: artist = newValue as? String
            case MPMediaItemPropertyAlbumTitle: album = newValue as? String
            case MPMediaItemPropertyAlbumArtist: albumArtist = newValue as? String
            case MPMediaItemPropertyArtwork: artwork = newValue as? Artwork
            case MPMediaItemPropertyPlaybackDuration: duration = number().flatMap { $0.isFinite && $0 >= 0 ? $0 : nil }
            case MPMediaItemPropertyAlbumTrackNumber: albumTrackNumber = whole()
            case MPMediaItemPropertyPersistentID: persistentID = identifier()
            case MPNowPlayingInfoPropertyElapsedPlaybackTime: elapsedTime = number().flatMap { $0.isFinite ? $0 : nil } ?? 0
            case MPNowPlayingInfoPropertyPlaybackRate: playbackRate = number().flatMap { $0.isFinite ? $0 : nil } ?? 1
            case MPNowPlayingInfoPropertyDefaultPlaybackRate: defaultPlaybackRate = number().flatMap { $0.isFinite ? $0 : nil } ?? 1
            case MPNowPlayingInfoPropertyPlaybackQueueIndex: queueIndex = whole()
            case MPNowPlayingInfoPropertyPlaybackQueueCount: queueCount = whole()
            case MPNowPlayingInfoPropertyAssetURL: trackURL = newValue as? URL
            default: break
            }
        }
    }
}
