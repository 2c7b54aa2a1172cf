// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCodecs
import TonearmCore
import TonearmTestSupport

/// Opens `path` expecting a `TonearmError`; returns it (records an issue if it opened).
private func openError(_ path: String) -> TonearmError? {
    do {
        _ = try AudioFile(path: path)
        Issue.record("\(path) opened, expected an error")
        return nil
    } catch {
        return error
    }
}

/// Bytes of a fixed pseudo-random sequence (the same every run).
private func garbage(_ count: Int, seed: UInt32 = 12345) -> [UInt8] {
    var x = seed
    return (0..<count).map { _ in
        x = x &* 1_103_515_245 &+ 12345
        return UInt8(truncatingIfNeeded: x >> 16)
    }
}

@Suite("AudioFile errors", .offThePool)
struct AudioFileErrorTests {
    @Test func missingFile() {
        let path = "/nonexistent-tonearm/song.flac"
        let e = openError(path)
        #expect(e == .fileNotFound(path: path))
        #expect(e?.description == "\(path): file not found")
        #expect(throws: TonearmError.invalidURL("https://example.com/a.mp3")) {
            try AudioFile(forReading: URL(string: "https://example.com/a.mp3")!)
        }
    }

    @Test func directory() throws {
        let dir = try TempDir("tonearm-err")
        defer { dir.remove() }
        let e = openError(dir.path)
        #expect(e == .isDirectory(path: dir.path))
        #expect(e?.description.contains("is a directory") == true)
    }

    @Test func emptyFile() throws {
        let dir = try TempDir("tonearm-err")
        defer { dir.remove() }
        let path = dir.file("empty.mp3")
        try Data().write(to: URL(fileURLWithPath: path))
        #expect(openError(path) == .emptyFile(path: path))
        #expect(throws: TonearmError.emptyFile(path: "x.wav")) { try AudioFile(data: [], nameHint: "x.wav") }
    }

    /// The tests run as root, whom `chmod 000` does not stop. A write-only sysctl file refuses
    /// reading even to root (procfs checks the mode bits for everyone).
    @Test func unreadableFile() throws {
        let path = "/proc/sys/vm/drop_caches"
        try #require(FileManager.default.fileExists(atPath: path), "needs procfs")
        guard case .notReadable(let p, let reason)? = openError(path) else {
            Issue.record("expected notReadable"); return
        }
        #expect(p == path)
        #expect(reason.lowercased().contains("permission denied"), "\(reason)")
    }

    @Test func textFileIsNotMedia() throws {
        let dir = try TempDir("tonearm-err")
        defer { dir.remove() }
        for name in ["notes.txt", "notes.mp3", "notes"] {
            let path = dir.file(name)
            try "Shopping list:\n- milk\n- bread\n- a new record player needle\n".write(toFile: path, atomically: true, encoding: .utf8)
            let e = openError(path)
            #expect(e == .notMediaFile(path: path, detail: "the content looks like text"), "\(String(describing: e))")
            #expect(e?.description.hasPrefix(path) == true)
        }
    }

    @Test func randomBytesAreNotMedia() throws {
        let dir = try TempDir("tonearm-err")
        defer { dir.remove() }
        // `.bin` also names a text-art format that FFmpeg opens from any bytes.
        for name in ["noise.bin", "noise.dat", "noise.mp3", "noise"] {
            let path = dir.file(name)
            try Data(garbage(4000)).write(to: URL(fileURLWithPath: path))
            let e = openError(path)
            #expect(e == .notMediaFile(path: path, detail: "FFmpeg found no known container format"), "\(String(describing: e))")
        }
    }

    @Test func imageAndVideoWithoutSoundHaveNoAudioTrack() throws {
        let dir = try TempDir("tonearm-err")
        defer { dir.remove() }
        let png = dir.file("cover.png"), mp4 = dir.file("silent.mp4")
        try Fixtures.png(path: png)
        try Fixtures.videoOnly(path: mp4)
        #expect(openError(png) == .noAudioTrack(path: png))
        #expect(openError(mp4) == .noAudioTrack(path: mp4))
        #expect(openError(mp4)?.description == "\(mp4): has no audio track")
    }

    /// A file without audio is closed when opening it fails: the decoder's demuxer is whole
    /// before it throws `noAudioTrack`, so the format context (and the descriptor of the file
    /// under it) goes with it. The decoder threw half made before, which left both open.
    @Test func aFileWithoutAudioIsClosedWhenOpeningItFails() throws {
        let dir = try TempDir("tonearm-err")
        defer { dir.remove() }
        let mp4 = dir.file("silent.mp4")
        try Fixtures.videoOnly(path: mp4)
        for _ in 0..<3 { #expect(openError(mp4) == .noAudioTrack(path: mp4)) }
        #expect(Self.openDescriptors(to: mp4) == 0)
    }

    /// How many of this process's file descriptors refer to `path`.
    static func openDescriptors(to path: String) -> Int {
        let fm = FileManager.default
        let target = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        let fds = (try? fm.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return fds.filter { (try? fm.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == target }.count
    }

    @Test func wavNamedMP3OpensWithAWarningAndPlays() throws {
        let dir = try TempDir("tonearm-err")
        defer { dir.remove() }
        let path = dir.file("song.mp3")
        try Fixtures.tone(path: path, codecArgs: ["-c:a", "pcm_s16le", "-f", "wav"], seconds: 0.5, rate: 44100, channels: 2)
        let file = try AudioFile(path: path)
        #expect(file.warnings == [.extensionMismatch(path: path, extension: "mp3", actualFormat: "WAV")])
        #expect(file.warnings.first?.description.contains("named .mp3 but the content is WAV") == true)
        #expect(file.fileFormat.containerName == "WAV")
        #expect(file.length == 22050)
        let all = try readAll(file)
        #expect(all[0].count == 22050)
        #expect(abs(frequency(all[0][2000..<20000], rate: 44100) - 440) < 2)
        // The same check for data in memory.
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let mem = try AudioFile(data: bytes, nameHint: "clip.mp3")
        #expect(mem.warnings == [.extensionMismatch(path: "clip.mp3", extension: "mp3", actualFormat: "WAV")])
        // A correctly named file has no warning.
        let wav = dir.file("song.wav")
        try FileManager.default.copyItem(atPath: path, toPath: wav)
        #expect(try AudioFile(path: wav).warnings.isEmpty)
    }

    @Test func codecWithoutDecoderIsUnsupported() throws {
        let dir = try TempDir("tonearm-err")
        defer { dir.remove() }
        let path = dir.file("mpegh.m4a")
        try Fixtures.undecodableM4A(path: path)
        let e = openError(path)
        #expect(e == .unsupportedCodec(path: path, codec: "mpegh_3d_audio"), "\(String(describing: e))")
        #expect(e?.description == "\(path): the codec 'mpegh_3d_audio' is not supported by this build")
    }

    /// Garbage written over the middle of a file: decoding goes on past it, the bad packets are
    /// reported, nothing throws or hangs.
    @Test(arguments: [("mp3", ["-c:a", "libmp3lame", "-b:a", "128k"]), ("flac", ["-c:a", "flac"])])
    func garbageInTheMiddleIsSkippedAndReported(_ ext: String, _ args: [String]) throws {
        let dir = try TempDir("tonearm-err")
        defer { dir.remove() }
        let path = dir.file("damaged.\(ext)")
        try Fixtures.tone(path: path, codecArgs: args, seconds: 4, rate: 44100, channels: 2)
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let at = bytes.count / 2
        bytes.replaceSubrange(at..<at + 3000, with: garbage(3000))
        try Data(bytes).write(to: URL(fileURLWithPath: path))

        let file = try AudioFile(path: path)
        let all = try readAll(file)
        // Most of the 4 s survive, and the audio after the damage is still the tone.
        #expect(all[0].count > 44100 * 3, "\(all[0].count) frames decoded")
        #expect(all[0].count == Int(file.length) || file.takeWarnings().contains { if case .truncated = $0 { true } else { false } })
        let tail = all[0].count - 30000 ..< all[0].count - 5000
        #expect(abs(frequency(all[0][tail], rate: 44100) - 440) < 2)
        let warnings = file.warnings + file.takeWarnings()
        let corrupt = warnings.filter { if case .corruptPacket = $0 { true } else { false } }
        #expect(!corrupt.isEmpty, "no corruptPacket warning: \(warnings)")
        if case .corruptPacket(let p, _, let frame, let detail)? = corrupt.first {
            #expect(p == path)
            #expect(frame > 44100 && frame < 44100 * 3, "gap reported at frame \(frame)")
            #expect(!detail.isEmpty)
        }
        // Seeking across the damage still works.
        file.framePosition = file.length / 4
        let rest = try readAll(file)
        #expect(rest[0].count == Int(file.length - file.length / 4))
    }

    /// A file cut in half decodes what is there; a header that promised more gives `.truncated`.
    @Test(arguments: ["flac", "mp3", "m4a", "wav", "ogg"])
    func fileCutInHalf(_ ext: String) throws {
        let dir = try TempDir("tonearm-err")
        defer { dir.remove() }
        let path = dir.file("cut.\(ext)")
        let args: [String] = switch ext {
        case "flac": ["-c:a", "flac"]
        case "mp3": ["-c:a", "libmp3lame"]
        case "m4a": ["-c:a", "aac"]
        case "ogg": ["-c:a", "libvorbis"]
        default: ["-c:a", "pcm_s16le"]
        }
        try Fixtures.tone(path: path, codecArgs: args, seconds: 4, rate: 44100, channels: 2)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: path))

        let file: AudioFile
        do {
            file = try AudioFile(path: path)
        } catch {
            // MP4 keeps its index at the end when not faststart: half a file may have no index at all.
            #expect(ext == "m4a", "\(error)")
            #expect(error.path == path)
            return
        }
        let all = try readAll(file)
        let warnings = file.warnings + file.takeWarnings()
        let truncated = warnings.contains { if case .truncated = $0 { true } else { false } }
        // Either the length says what is there, or the reader reports the shortfall.
        #expect(all[0].count == Int(file.length) || truncated, "\(all[0].count) of \(file.length): \(warnings)")
        #expect(all[0].count > 44100 / 2 && all[0].count < 44100 * 3)
        // FLAC's STREAMINFO gives the total length; the WAV demuxer trusts the file size instead.
        if ext == "flac" { #expect(truncated, "\(warnings)") }
    }
}
