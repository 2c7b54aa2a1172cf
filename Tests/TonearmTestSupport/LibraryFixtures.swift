// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// A generated music library for the media-library tests: tagged MP3s (hand-written ID3v2.3 tags
/// in UTF-16 on a 0.2 s tone made once by ffmpeg) in Artist/Album folders, plus FLAC audiobook
/// chapters, a GBK-tagged MP3 (ID3v1), and files that are not media.
public enum LibraryFixtures {
    /// One track to write.
    public struct Track: Sendable {
        public var path: String
        public var title: String
        public var artist: String
        public var album: String
        public var albumArtist: String?
        public var genre: String
        public var track: Int
        public var trackCount: Int
        public var disc: Int = 1
        public var discCount: Int = 1
        public var year: Int
        public var composer: String?
        public var compilation = false
        public var cover = false

        public init(path: String, title: String, artist: String, album: String, albumArtist: String? = nil,
                    genre: String, track: Int, trackCount: Int, disc: Int = 1, discCount: Int = 1, year: Int,
                    composer: String? = nil, compilation: Bool = false, cover: Bool = false) {
            self.path = path; self.title = title; self.artist = artist; self.album = album
            self.albumArtist = albumArtist; self.genre = genre; self.track = track; self.trackCount = trackCount
            self.disc = disc; self.discCount = discCount; self.year = year; self.composer = composer
            self.compilation = compilation; self.cover = cover
        }
    }

    /// The tracks of the standard library (relative paths).
    public static let tracks: [Track] = {
        var t: [Track] = []
        for n in 1...10 {
            t.append(Track(path: "Beyoncé/Lemonade/\(String(format: "%02d", n)) Song \(n).mp3", title: "Lemonade Song \(n)",
                           artist: "Beyoncé", album: "Lemonade", genre: "Pop", track: n, trackCount: 10, year: 2016,
                           composer: "Beyoncé Knowles", cover: true))
        }
        for n in 1...8 {
            let disc = n <= 4 ? 1 : 2, track = (n - 1) % 4 + 1
            t.append(Track(path: "Sigur Rós/Ágætis byrjun/\(disc)-\(track).mp3", title: "Sæglópur \(disc)-\(track)",
                           artist: "Sigur Rós", album: "Ágætis byrjun", genre: "Post-Rock", track: track, trackCount: 4,
                           disc: disc, discCount: 2, year: 1999))
        }
        for n in 1...6 {
            t.append(Track(path: "周杰伦/叶惠美/\(n).mp3", title: "晴天 \(n)", artist: "周杰伦", album: "叶惠美",
                           genre: "Mandopop", track: n, trackCount: 6, year: 2003, composer: "周杰伦"))
        }
        for (album, year) in [("Album One", 2001), ("Album Two", 1999)] {
            for n in 1...8 {
                t.append(Track(path: "The Band/\(album)/\(n).mp3", title: "\(album) Track \(n)", artist: "The Band",
                               album: album, genre: "Rock", track: n, trackCount: 8, year: year))
            }
        }
        let various = ["Beyoncé", "Artist X", "Artist Y", "Artist Z", "The Band", "Artist X"]
        for n in 1...6 {
            t.append(Track(path: "Compilations/Hits 2020/\(n).mp3", title: "Hit \(n)", artist: various[n - 1],
                           album: "Hits 2020", albumArtist: "Various Artists", genre: "Pop", track: n, trackCount: 6,
                           year: 2020, compilation: true))
        }
        for n in 1...2 {
            t.append(Track(path: "Shows/Tech Talk/episode \(n).mp3", title: "Episode \(n)", artist: "Tech Talk Host",
                           album: "Tech Talk", genre: "Podcast", track: n, trackCount: 2, year: 2024))
        }
        return t
    }()

    /// Audiobook chapters (FLAC, in an "Audiobooks" folder, genre "Books").
    public static let audiobookChapters = ["Audiobooks/The Long Book/chapter 1.flac", "Audiobooks/The Long Book/chapter 2.flac"]
    /// The GBK-tagged MP3: title 青花瓷, artist 周杰伦, album 我很忙.
    public static let gbkPath = "GBK/qinghuaci.mp3"
    /// Files that are not media, each with the start of the reason the library should give.
    public static let junk = ["notes.txt": "a text file", "Beyoncé/Lemonade/broken.mp3": "", "Beyoncé/Lemonade/folder.png": ""]

    /// Every media file the standard library holds.
    public static var mediaCount: Int { tracks.count + audiobookChapters.count + 1 }

    /// Writes the standard library under `root`.
    public static func make(at root: String) throws {
        let base = try baseMP3(in: root)
        let png = try TagFixtures.coverPNG(root + "/.cover.png")
        for t in tracks { try write(t, base: base, png: png, root: root) }
        for (i, chapter) in audiobookChapters.enumerated() {
            let path = root + "/" + chapter
            try mkdirs(path)
            try TagFixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=\(300 + 100 * i):duration=0.3", "-c:a", "flac",
                                    "-metadata", "title=Chapter \(i + 1)", "-metadata", "artist=Narrator",
                                    "-metadata", "album=The Long Book", "-metadata", "genre=Books",
                                    "-metadata", "track=\(i + 1)", path])
        }
        let gbk = root + "/" + gbkPath
        try mkdirs(gbk)
        try Data(base + TagFixtures.id3v1(title: TagFixtures.encode("青花瓷", "GBK"), artist: TagFixtures.encode("周杰伦", "GBK"),
                                          album: TagFixtures.encode("我很忙", "GBK"), year: "2007", track: 1, genre: 13))
            .write(to: URL(fileURLWithPath: gbk))
        try Data("Notes about the collection.\nNot music.\n".utf8).write(to: URL(fileURLWithPath: root + "/notes.txt"))
        // Bytes no demuxer recognises, named .mp3.
        var x: UInt32 = 12345
        let noise = (0..<4000).map { _ -> UInt8 in x = x &* 1_103_515_245 &+ 12345; return UInt8(truncatingIfNeeded: x >> 16) & 0x7F | 0x01 }
        try Data([0, 0, 0, 0] + noise).write(to: URL(fileURLWithPath: root + "/Beyoncé/Lemonade/broken.mp3"))
        try Data(png).write(to: URL(fileURLWithPath: root + "/Beyoncé/Lemonade/folder.png"))
    }

    /// The artists of the large library, named in many scripts and styles: English articles,
    /// accented and special Latin letters, Chinese, Japanese kana, Korean, Cyrillic, Greek, and
    /// digits. Each has ``largeAlbumsPerArtist`` albums of ``largeTracksPerAlbum`` tracks.
    public static let largeArtists = [
        "The Lanterns", "A Quiet Engine", "Édith Nova", "Øystein Berg", "Łucja Mazur", "Ásgeir Tónn",
        "Zebra Kings", "zulu Static", "Brass Foundry", "Cellar Door", "Marrow", "Nightjar",
        "王菲", "陈奕迅", "张学友", "林俊杰", "邓丽君",
        "かぜのうた", "スピカ", "별빛", "하늘", "Кино Лето", "Звёзды", "Ωμέγα", "99 Rivers",
    ]
    public static let largeAlbumsPerArtist = 3
    public static let largeTracksPerAlbum = 4

    /// The tracks the large library adds to the standard one (300), in Artist/Album folders
    /// under "More/".
    public static let largeTracks: [Track] = {
        var t: [Track] = []
        let genres = ["Jazz", "Folk", "Électro", "Ambient", "Cantopop"]
        for (a, artist) in largeArtists.enumerated() {
            for album in 1...largeAlbumsPerArtist {
                let albumTitle = "\(artist) \(["I", "II", "III"][album - 1])"
                for n in 1...largeTracksPerAlbum {
                    t.append(Track(path: "More/\(artist)/\(albumTitle)/\(n).mp3", title: "\(artist) — \(album).\(n)",
                                   artist: artist, album: albumTitle, genre: genres[a % genres.count], track: n,
                                   trackCount: largeTracksPerAlbum, year: 2010 - album * 3 + a % 2))
                }
            }
        }
        return t
    }()

    /// Media files in the large library.
    public static var largeMediaCount: Int { mediaCount + largeTracks.count }

    /// Writes the standard library and the ``largeTracks`` under `root` (hundreds of files).
    public static func makeLarge(at root: String) throws {
        try make(at: root)
        let base = try baseMP3(in: root)
        let png = try TagFixtures.coverPNG(root + "/.cover.png")
        for t in largeTracks { try write(t, base: base, png: png, root: root) }
    }

    /// Writes one track: an ID3v2.3 tag in front of `base`.
    public static func write(_ t: Track, base: [UInt8], png: [UInt8], root: String) throws {
        var frames = [
            try TagFixtures.id3v2UTF16Frame("TIT2", t.title),
            try TagFixtures.id3v2UTF16Frame("TPE1", t.artist),
            try TagFixtures.id3v2UTF16Frame("TALB", t.album),
            try TagFixtures.id3v2UTF16Frame("TCON", t.genre),
            try TagFixtures.id3v2UTF16Frame("TRCK", "\(t.track)/\(t.trackCount)"),
            try TagFixtures.id3v2UTF16Frame("TPOS", "\(t.disc)/\(t.discCount)"),
            try TagFixtures.id3v2UTF16Frame("TYER", String(t.year)),
        ]
        if let a = t.albumArtist { frames.append(try TagFixtures.id3v2UTF16Frame("TPE2", a)) }
        if let c = t.composer { frames.append(try TagFixtures.id3v2UTF16Frame("TCOM", c)) }
        if t.compilation { frames.append(TagFixtures.id3v2TextFrame("TCMP", encoding: 0, Array("1".utf8))) }
        if t.cover { frames.append(TagFixtures.id3v2Frame("APIC", [0] + Array("image/png".utf8) + [0, 3, 0] + png)) }
        let path = root + "/" + t.path
        try mkdirs(path)
        try Data(TagFixtures.id3v2Tag(frames: frames) + base).write(to: URL(fileURLWithPath: path))
    }

    /// An untagged 0.2 s MP3 (made in `dir`, then deleted); its bytes.
    public static func baseMP3(in dir: String) throws -> [UInt8] {
        let path = dir + "/.base.mp3"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try TagFixtures.plainMP3(path)
        defer { try? FileManager.default.removeItem(atPath: path) }
        return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    static func mkdirs(_ file: String) throws {
        try FileManager.default.createDirectory(atPath: (file as NSString).deletingLastPathComponent,
                                                withIntermediateDirectories: true)
    }
}
