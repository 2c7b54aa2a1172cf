// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCodecs
import TonearmCore
import TonearmTestSupport

/// A part of a file opened as a file of its own (MPD's `rangeid`, played by the queue): its
/// frames are exactly the file's from the part's start, it ends at the part's end, and seeks
/// stay inside it — for the native FLAC reader and for FFmpeg's decoders alike.
@Suite(.offThePool) struct AudioFileSectionTests {
    /// Every frame of `file` from its position on, left channel.
    static func readAll(_ file: AudioFile) throws -> [Float] {
        let buffer = try #require(AudioPCMBuffer(format: file.processingFormat, frameCapacity: 4096))
        var out: [Float] = []
        while true {
            try file.read(into: buffer)
            if buffer.frameLength == 0 { return out }
            out += buffer.channel(0)
        }
    }

    @Test(arguments: [("flac", ["-c:a", "flac"]), ("mp3", ["-c:a", "libmp3lame", "-b:a", "192k"]), ("wav", ["-c:a", "pcm_s16le"])])
    func aPartIsTheFilesFramesFromItsStartToItsEnd(ext: String, codec: [String]) throws {
        let dir = try TempDir("section")
        defer { dir.remove() }
        let path = dir.file("tone.\(ext)")
        try Fixtures.tone(path: path, codecArgs: codec, seconds: 3, rate: 44100)
        let whole = try Self.readAll(try AudioFile(path: path))
        let part = try AudioFile(path: path, audioStream: nil, seconds: PlaybackRange(start: 1.0, end: 2.25))
        #expect(part.length == 55_125 && part.framePosition == 0)
        #expect(abs(part.duration - 1.25) < 1e-9)
        let frames = try Self.readAll(part)
        #expect(frames == Array(whole[44_100..<99_225]), "\(ext): the part's frames are the file's from 1 s to 2.25 s")
        #expect(part.framePosition == part.length)
        // A seek inside the part: the file's frame at the part's start plus it.
        try part.seek(toFrame: 10_000)
        #expect(try Self.readAll(part) == Array(whole[54_100..<99_225]))
        #expect(throws: TonearmError.self) { try part.seek(toFrame: part.length + 1) }
        // To the end: nil, or an end past the file.
        let tail = try AudioFile(path: path, audioStream: nil, seconds: PlaybackRange(start: 2.5, end: 60))
        #expect(tail.length == whole.count - 110_250)
        #expect(try Self.readAll(tail) == Array(whole[110_250...]))
        #expect(try AudioFile(path: path, audioStream: nil, seconds: PlaybackRange(start: 2.5)).length == tail.length)
    }

    @Test func aPartOutsideTheFileIsRefusedNamingIt() throws {
        let dir = try TempDir("section-bad")
        defer { dir.remove() }
        let path = dir.file("tone.flac")
        try Fixtures.tone(path: path, codecArgs: ["-c:a", "flac"], seconds: 1, rate: 44100)
        #expect(throws: TonearmError.invalidArgument("\(path): the range 5.000–end starts after the file's 1.000 s")) {
            try AudioFile(path: path, audioStream: nil, seconds: PlaybackRange(start: 5))
        }
        for bad in [PlaybackRange(start: -1), PlaybackRange(start: 0.5, end: 0.5), PlaybackRange(start: .nan)] {
            #expect(throws: TonearmError.self) { try AudioFile(path: path, audioStream: nil, seconds: bad) }
        }
    }
}
