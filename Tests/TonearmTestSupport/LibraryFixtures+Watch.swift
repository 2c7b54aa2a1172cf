// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// Media for the folder-watching tests.
extension LibraryFixtures {
    /// A one-track album by `artist` at `path` (relative): distinct tags give distinct content.
    public static func single(_ path: String, title: String, artist: String = "Watcher") -> Track {
        Track(path: path, title: title, artist: artist, album: title + " (single)", genre: "Test", track: 1, trackCount: 1,
              year: 2025)
    }

    /// The bytes of a constant-bit-rate MP3 tone of `seconds` without a Xing/Info header (made in
    /// `dir`, then deleted): its duration is only known from its size, so a copy cut short reads
    /// as shorter.
    public static func longMP3(seconds: Double, in dir: String) throws -> [UInt8] {
        let path = dir + "/.long.mp3"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try TagFixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=330:duration=\(seconds):sample_rate=44100",
                                "-c:a", "libmp3lame", "-b:a", "128k", "-write_xing", "0", "-id3v2_version", "0", path])
        defer { try? FileManager.default.removeItem(atPath: path) }
        return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }
}
