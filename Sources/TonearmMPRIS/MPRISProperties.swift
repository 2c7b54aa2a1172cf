// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmCore
import TonearmNowPlaying

/// The MPRIS2 names this service uses.
enum MPRIS {
    static let objectPath = "/org/mpris/MediaPlayer2"
    static let rootInterface = "org.mpris.MediaPlayer2"
    static let playerInterface = "org.mpris.MediaPlayer2.Player"
    static let propertiesInterface = "org.freedesktop.DBus.Properties"
    static let introspectableInterface = "org.freedesktop.DBus.Introspectable"
    static let noTrack = "/org/mpris/MediaPlayer2/TrackList/NoTrack"

    /// The track id of a persistent ID: a valid object path, whatever the number.
    static func trackID(_ persistentID: UInt64) -> String { "/org/tonearm/track/\(persistentID)" }

    /// The player properties that clients may set.
    static let writablePlayerProperties: Set<String> = ["LoopStatus", "Shuffle", "Volume", "Rate"]

    static func loopStatus(_ r: RepeatType) -> String {
        switch r {
        case .none: "None"
        case .one: "Track"
        case .all: "Playlist"
        }
    }

    static func repeatType(loopStatus: String) -> RepeatType? {
        switch loopStatus {
        case "None": RepeatType.none
        case "Track": .one
        case "Playlist": .all
        default: nil
        }
    }

    static func playbackStatus(_ s: NowPlayingPlaybackState) -> String {
        switch s {
        case .playing: "Playing"
        case .paused, .interrupted: "Paused"
        case .stopped, .unknown: "Stopped"
        }
    }

    /// Hand-written introspection data for the object (libdbus writes none).
    static let introspectionXML = """
    <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
     "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
    <node>
      <interface name="org.freedesktop.DBus.Introspectable">
        <method name="Introspect">
          <arg name="xml_data" type="s" direction="out"/>
        </method>
      </interface>
      <interface name="org.freedesktop.DBus.Peer">
        <method name="Ping"/>
        <method name="GetMachineId">
          <arg name="machine_uuid" type="s" direction="out"/>
        </method>
      </interface>
      <interface name="org.freedesktop.DBus.Properties">
        <method name="Get">
          <arg name="interface_name" type="s" direction="in"/>
          <arg name="property_name" type="s" direction="in"/>
          <arg name="value" type="v" direction="out"/>
        </method>
        <method name="GetAll">
          <arg name="interface_name" type="s" direction="in"/>
          <arg name="properties" type="a{sv}" direction="out"/>
        </method>
        <method name="Set">
          <arg name="interface_name" type="s" direction="in"/>
          <arg name="property_name" type="s" direction="in"/>
          <arg name="value" type="v" direction="in"/>
        </method>
        <signal name="PropertiesChanged">
          <arg name="interface_name" type="s"/>
          <arg name="changed_properties" type="a{sv}"/>
          <arg name="invalidated_properties" type="as"/>
        </signal>
      </interface>
      <interface name="org.mpris.MediaPlayer2">
        <method name="Raise"/>
        <method name="Quit"/>
        <property name="CanQuit" type="b" access="read"/>
        <property name="CanRaise" type="b" access="read"/>
        <property name="HasTrackList" type="b" access="read"/>
        <property name="Identity" type="s" access="read"/>
        <property name="DesktopEntry" type="s" access="read"/>
        <property name="SupportedUriSchemes" type="as" access="read"/>
        <property name="SupportedMimeTypes" type="as" access="read"/>
      </interface>
      <interface name="org.mpris.MediaPlayer2.Player">
        <method name="Next"/>
        <method name="Previous"/>
        <method name="Pause"/>
        <method name="PlayPause"/>
        <method name="Stop"/>
        <method name="Play"/>
        <method name="Seek">
          <arg name="Offset" type="x" direction="in"/>
        </method>
        <method name="SetPosition">
          <arg name="TrackId" type="o" direction="in"/>
          <arg name="Position" type="x" direction="in"/>
        </method>
        <method name="OpenUri">
          <arg name="Uri" type="s" direction="in"/>
        </method>
        <signal name="Seeked">
          <arg name="Position" type="x"/>
        </signal>
        <property name="PlaybackStatus" type="s" access="read"/>
        <property name="LoopStatus" type="s" access="readwrite"/>
        <property name="Rate" type="d" access="readwrite"/>
        <property name="Shuffle" type="b" access="readwrite"/>
        <property name="Metadata" type="a{sv}" access="read"/>
        <property name="Volume" type="d" access="readwrite"/>
        <property name="Position" type="x" access="read">
          <annotation name="org.freedesktop.DBus.Property.EmitsChangedSignal" value="false"/>
        </property>
        <property name="MinimumRate" type="d" access="read"/>
        <property name="MaximumRate" type="d" access="read"/>
        <property name="CanGoNext" type="b" access="read"/>
        <property name="CanGoPrevious" type="b" access="read"/>
        <property name="CanPlay" type="b" access="read"/>
        <property name="CanPause" type="b" access="read"/>
        <property name="CanSeek" type="b" access="read"/>
        <property name="CanControl" type="b" access="read"/>
      </interface>
    </node>

    """
}

/// The values of the `org.mpris.MediaPlayer2.Player` properties at one instant, computed from
/// the info center and the command center. Built on the D-Bus thread.
struct PlayerProperties {
    var values: [String: DBusValue]

    init(snapshot s: NowPlayingInfoCenter.Snapshot, commands c: RemoteCommandCenter, now: ContinuousClock.Instant,
         artURL: (Artwork) -> String?) {
        let info = s.nowPlayingInfo
        let rates = c.changePlaybackRate.isAvailable ? c.changePlaybackRate.supportedPlaybackRates : []
        let minRate = min(rates.min() ?? 1, 1), maxRate = max(rates.max() ?? 1, 1)
        // While paused (playbackRate 0) the rate it plays at.
        let rate = info.map { $0.playbackRate > 0 ? $0.playbackRate : ($0.defaultPlaybackRate > 0 ? $0.defaultPlaybackRate : 1) } ?? 1
        let hasItem = info != nil
        let canPlay = hasItem && (c.play.isAvailable || c.togglePlayPause.isAvailable)
        let canPause = hasItem && (c.pause.isAvailable || c.togglePlayPause.isAvailable)
        let canSeek = hasItem && info?.duration != nil && c.changePlaybackPosition.isAvailable
        let canNext = c.nextTrack.isAvailable, canPrevious = c.previousTrack.isAvailable
        let anyCommand = canPlay || canPause || canSeek || canNext || canPrevious || c.stop.isAvailable
            || c.changeVolume.isAvailable || c.changeRepeatMode.isAvailable || c.changeShuffleMode.isAvailable
        values = [
            "PlaybackStatus": .string(MPRIS.playbackStatus(s.shownPlaybackState)),
            "LoopStatus": .string(MPRIS.loopStatus(s.repeatType)),
            "Rate": .double(rate),
            "Shuffle": .bool(s.shuffleType != .off),
            "Metadata": Self.metadata(info, artURL: artURL),
            "Volume": .double(s.volume),
            "Position": .int64(Self.microseconds(s.elapsedTime(at: now) ?? 0)),
            "MinimumRate": .double(minRate),
            "MaximumRate": .double(maxRate),
            "CanGoNext": .bool(canNext),
            "CanGoPrevious": .bool(canPrevious),
            "CanPlay": .bool(canPlay),
            "CanPause": .bool(canPause),
            "CanSeek": .bool(canSeek),
            "CanControl": .bool(anyCommand),
        ]
    }

    /// Seconds to whole microseconds, saturating.
    static func microseconds(_ seconds: Double) -> Int64 {
        guard seconds.isFinite else { return 0 }
        let us = (seconds * 1e6).rounded()
        return us >= 9.2e18 ? Int64.max : us <= -9.2e18 ? Int64.min : Int64(us)
    }

    static func metadata(_ info: NowPlayingInfo?, artURL: (Artwork) -> String?) -> DBusValue {
        guard let info else { return .vardict(["mpris:trackid": .objectPath(MPRIS.noTrack)]) }
        var m: [String: DBusValue] = ["mpris:trackid": .objectPath(MPRIS.trackID(info.persistentID))]
        if let d = info.duration, d.isFinite, d >= 0 { m["mpris:length"] = .int64(microseconds(d)) }
        if let t = info.title { m["xesam:title"] = .string(t) }
        if let a = info.artist { m["xesam:artist"] = .strings([a]) }
        if let a = info.album { m["xesam:album"] = .string(a) }
        if let a = info.albumArtist { m["xesam:albumArtist"] = .strings([a]) }
        if let u = info.trackURL { m["xesam:url"] = .string(u.absoluteString) }
        if let art = info.artwork, let url = artURL(art) { m["mpris:artUrl"] = .string(url) }
        if let n = info.albumTrackNumber, n > 0 { m["xesam:trackNumber"] = .int32(Int32(clamping: n)) }
        return .vardict(m)
    }
}

/// Writes embedded artwork once to `<directory>/<hash>.<ext>` and gives its `file://` URL.
/// Used only on the D-Bus thread; remembers the last artwork so that an unchanged cover is
/// neither hashed nor written again.
final class ArtworkCache {
    let directory: String
    private var last: (artwork: Artwork, url: String?)?

    /// `directory` nil: `$XDG_CACHE_HOME/tonearm/art`, or `~/.cache/tonearm/art`.
    init(directory: String?) {
        if let directory {
            self.directory = directory
        } else {
            let env = ProcessInfo.processInfo.environment
            let base = env["XDG_CACHE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
                ?? (env["HOME"] ?? NSHomeDirectory()) + "/.cache"
            self.directory = base + "/tonearm/art"
        }
    }

    /// The file URL of `artwork`'s cache file, written if it is not there yet; nil when it
    /// cannot be written (no cover is then published).
    func url(for artwork: Artwork) -> String? {
        if let last, last.artwork == artwork { return last.url }
        let url = write(artwork)
        last = (artwork, url)
        return url
    }

    private func write(_ artwork: Artwork) -> String? {
        guard !artwork.data.isEmpty else { return nil }
        // FNV-1a (64 bits) of the bytes, with the length: a name, not a security measure.
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in artwork.data { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        let name = String(h, radix: 16) + "-" + String(artwork.data.count, radix: 16) + "." + Self.fileExtension(artwork.mimeType)
        let path = directory + "/" + name
        let fm = FileManager.default
        if !fm.fileExists(atPath: path) {
            do {
                try fm.createDirectory(atPath: directory, withIntermediateDirectories: true)
                try Data(artwork.data).write(to: URL(fileURLWithPath: path), options: .atomic)
            } catch {
                return nil
            }
        }
        return URL(fileURLWithPath: path).absoluteString
    }

    static func fileExtension(_ mime: String) -> String {
        switch mime.lowercased() {
        case "image/jpeg", "image/jpg": "jpg"
        case "image/png": "png"
        case "image/gif": "gif"
        case "image/webp": "webp"
        case "image/bmp": "bmp"
        default: "img"
        }
    }
}
