// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
@testable import TonearmNetwork

/// `HLSPlaylist` parsing and AES-128 decryption, offline: master and media playlists, keys and
/// IVs, relative URIs, and every refusal typed (with the line), above all a URI whose scheme is
/// not http or https.
@Suite struct HLSPlaylistTests {
    let base = URL(string: "https://example.com/audio/stream/index.m3u8")!

    func parse(_ text: String, limits: HLSPlaylistLimits = HLSPlaylistLimits()) throws(TonearmError) -> HLSPlaylist {
        try HLSPlaylist.parse(Array(text.utf8), url: base, limits: limits)
    }

    func media(_ text: String) throws -> HLSMediaPlaylist {
        guard case .media(let m) = try parse(text) else { throw TonearmError.invalidState("not a media playlist") }
        return m
    }

    /// The error a playlist gives (nil when it parses).
    func refusal(_ text: String, limits: HLSPlaylistLimits = HLSPlaylistLimits()) -> TonearmError? {
        do {
            _ = try parse(text, limits: limits)
            return nil
        } catch {
            return error
        }
    }

    /// The line and reason of an `invalidPlaylist` error.
    func invalid(_ text: String, limits: HLSPlaylistLimits = HLSPlaylistLimits()) -> (line: Int?, reason: String)? {
        guard case .invalidPlaylist(let path, let line, let reason)? = refusal(text, limits: limits) else { return nil }
        #expect(path == base.absoluteString)
        return (line, reason)
    }

    @Test func aMasterPlaylistListsItsVariants() throws {
        let text = """
        #EXTM3U
        #EXT-X-VERSION:3
        # a comment
        #EXT-X-STREAM-INF:BANDWIDTH=64000,AVERAGE-BANDWIDTH=56000,CODECS="mp4a.40.2"
        low/index.m3u8

        #EXT-X-STREAM-INF:CODECS="mp4a.40.2,mp4a.40.5",BANDWIDTH=192000
        /other/high.m3u8
        #EXT-X-STREAM-INF:BANDWIDTH=128000
        https://cdn.example.net/mid.m3u8?token=a%20b
        """
        guard case .master(let m) = try parse(text) else {
            Issue.record("not a master playlist")
            return
        }
        #expect(m.variants.map(\.bandwidth) == [64000, 192000, 128000])
        #expect(m.variants[0].averageBandwidth == 56000)
        #expect(m.variants[1].averageBandwidth == nil)
        #expect(m.variants[0].codecs == ["mp4a.40.2"])
        #expect(m.variants[1].codecs == ["mp4a.40.2", "mp4a.40.5"])
        #expect(m.variants[0].url.absoluteString == "https://example.com/audio/stream/low/index.m3u8")
        #expect(m.variants[1].url.absoluteString == "https://example.com/other/high.m3u8")
        #expect(m.variants[2].url.absoluteString == "https://cdn.example.net/mid.m3u8?token=a%20b")
    }

    @Test func aMediaPlaylistListsItsSegmentsBySequence() throws {
        let m = try media("""
        #EXTM3U\r
        #EXT-X-VERSION:3\r
        #EXT-X-TARGETDURATION:4\r
        #EXT-X-MEDIA-SEQUENCE:17\r
        #EXT-X-PLAYLIST-TYPE:VOD\r
        #EXTINF:3.98,first\r
        seg17.ts\r
        #EXTINF:4,\r
        seg18.ts\r
        #EXT-X-DISCONTINUITY\r
        #EXTINF:2.5\r
        ../elsewhere/seg19.aac\r
        #EXT-X-ENDLIST\r
        """)
        #expect(m.targetDuration == 4)
        #expect(m.mediaSequence == 17)
        #expect(m.playlistType == .vod)
        #expect(m.hasEndList && !m.isLive)
        #expect(m.segments.map(\.sequence) == [17, 18, 19])
        #expect(m.segments.map(\.duration) == [3.98, 4, 2.5])
        #expect(m.segments.map(\.title) == ["first", "", ""])
        #expect(m.segments.map(\.discontinuity) == [false, false, true])
        #expect(m.segments.map(\.url.absoluteString) == ["https://example.com/audio/stream/seg17.ts",
                                                          "https://example.com/audio/stream/seg18.ts",
                                                          "https://example.com/audio/elsewhere/seg19.aac"])
        #expect(abs(m.duration - 10.48) < 1e-9)
        #expect(m.segment(sequence: 18)?.url.lastPathComponent == "seg18.ts")
        #expect(m.segment(sequence: 16) == nil && m.segment(sequence: 20) == nil)
        #expect(m.endSequence == 20)
    }

    @Test func aLivePlaylistHasNoEnd() throws {
        let m = try media("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\na.ts\n#EXTINF:2,\nb.ts\n")
        #expect(m.isLive)
        #expect(m.mediaSequence == 0)
        #expect(m.playlistType == nil)
        let event = try media("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-PLAYLIST-TYPE:EVENT\n#EXTINF:2,\na.ts\n")
        #expect(event.playlistType == .event && event.isLive)
    }

    @Test func keysApplyToTheSegmentsAfterThem() throws {
        let m = try media("""
        #EXTM3U
        #EXT-X-TARGETDURATION:2
        #EXT-X-MEDIA-SEQUENCE:5
        #EXTINF:2,
        clear.ts
        #EXT-X-KEY:METHOD=AES-128,URI="keys/k1.bin"
        #EXTINF:2,
        a.ts
        #EXT-X-KEY:METHOD=AES-128,URI="https://keys.example.com/k2",IV=0x000102030405060708090A0B0C0D0E0F
        #EXTINF:2,
        b.ts
        #EXT-X-KEY:METHOD=NONE
        #EXTINF:2,
        c.ts
        #EXT-X-ENDLIST
        """)
        #expect(m.segments[0].key == nil)
        #expect(m.segments[1].key?.method == .aes128)
        #expect(m.segments[1].key?.url?.absoluteString == "https://example.com/audio/stream/keys/k1.bin")
        #expect(m.segments[1].key?.iv == nil)
        // The default IV: the media sequence number, big-endian, in 16 bytes.
        #expect(m.segments[1].key?.iv(forSequence: 6) == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 6])
        #expect(HLSKey(method: .aes128, url: nil, iv: nil).iv(forSequence: 0x0102_0304_0506) == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6])
        #expect(m.segments[2].key?.iv == Array(0...15))
        #expect(m.segments[2].key?.iv(forSequence: 7) == Array(0...15))
        #expect(m.segments[2].key?.url?.host == "keys.example.com")
        #expect(m.segments[3].key == nil)
    }

    @Test func attributeListsAreParsedStrictly() throws {
        #expect(try HLSPlaylist.attributes("A=1,B=\"x, y\",C-2=0x1F").get() == ["A": "1", "B": "x, y", "C-2": "0x1F"])
        #expect(try HLSPlaylist.attributes("").get() == [:])
        for bad in ["A", "A=", "=1", "a=1", "A=1,", "A=\"open", "A=\"x\"y", "A=1,A=2", "A=x\"y", "A B=1"] {
            if case .success(let a) = HLSPlaylist.attributes(bad[...]) { Issue.record("'\(bad)' parsed as \(a)") }
        }
    }

    @Test func malformedPlaylistsSayWhichLineAndWhat() {
        #expect(invalid("<!DOCTYPE html>\n<html></html>")?.line == 1)
        #expect(invalid("<!DOCTYPE html>\n<html></html>")?.reason.contains("#EXTM3U") == true)
        #expect(invalid("")?.line == 1)
        #expect(invalid("\n#EXTM3U\n")?.line == 1)
        let badAttributes = invalid("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1,CODECS=\"mp4a\nlow.m3u8")
        #expect(badAttributes?.line == 2)
        #expect(badAttributes?.reason.contains("attribute") == true)
        #expect(invalid("#EXTM3U\n#EXT-X-STREAM-INF:CODECS=\"mp4a\"\nlow.m3u8")?.reason.contains("BANDWIDTH") == true)
        #expect(invalid("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=fast\nlow.m3u8")?.line == 2)
        let noInfo = invalid("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\na.ts\nb.ts\n")
        #expect(noInfo?.line == 5)
        #expect(noInfo?.reason.contains("#EXTINF") == true)
        #expect(invalid("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:two,\na.ts\n")?.line == 3)
        #expect(invalid("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\n")?.line == 3)
        #expect(invalid("#EXTM3U\n#EXTINF:2,\na.ts\n")?.reason.contains("TARGETDURATION") == true)
        #expect(invalid("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-KEY:METHOD=SAMPLE-AES,URI=\"k\"\n")?.line == 3)
        #expect(invalid("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-KEY:METHOD=AES-128\n")?.reason.contains("URI") == true)
        #expect(invalid("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-KEY:METHOD=AES-128,URI=\"k\",IV=0x1234\n")?.line == 3)
        #expect(invalid("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-PLAYLIST-TYPE:LIVE\n")?.line == 3)
        #expect(invalid("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-BYTERANGE:100@0\n#EXTINF:2,\na.ts\n")?.line == 3)
        #expect(invalid("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\na.m3u8\n#EXT-X-TARGETDURATION:2\n")?.line == 4)
        #expect(invalid("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\na.m3u8\nb.m3u8\n")?.line == 4)
    }

    /// Found by fuzzing (scripts/fuzz, FuzzHLS): a media sequence near Int.max parsed, and the
    /// playlist's `endSequence` (sequence + segment count) then trapped on overflow. Sequence
    /// numbers above 2^62 are refused, naming the line; 2^62 itself still parses.
    @Test func aMediaSequenceNearIntMaxIsRefused() throws {
        let huge = "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXT-X-MEDIA-SEQUENCE:\(Int.max - 1)\n#EXTINF:4,\na.ts\n#EXTINF:4,\nb.ts\n"
        let refused = invalid(huge)
        #expect(refused?.line == 3)
        #expect(refused?.reason.contains("MEDIA-SEQUENCE") == true)
        let largest = try media("#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXT-X-MEDIA-SEQUENCE:\(1 << 62)\n#EXTINF:4,\na.ts\n#EXTINF:4,\nb.ts\n")
        #expect(largest.endSequence == (1 << 62) + 2)
        #expect(largest.segment(sequence: (1 << 62) + 1)?.url.lastPathComponent == "b.ts")
    }

    @Test func limitsAreKept() {
        let big = "#EXTM3U\n#EXT-X-TARGETDURATION:2\n" + String(repeating: "#EXTINF:2,\nsegment.ts\n", count: 200)
        #expect(refusal(big) == nil)
        let bytes = invalid(big, limits: HLSPlaylistLimits(maximumBytes: 1000, maximumLines: 100_000))
        #expect(bytes?.line == nil)
        #expect(bytes?.reason.contains("1000 bytes") == true)
        let lines = invalid(big, limits: HLSPlaylistLimits(maximumBytes: 1 << 20, maximumLines: 50))
        #expect(lines?.line == 51)
        #expect(lines?.reason.contains("50 lines") == true)
        // The default limits: 1 MiB, 100 000 lines.
        #expect(HLSPlaylistLimits() == HLSPlaylistLimits(maximumBytes: 1 << 20, maximumLines: 100_000))
        #expect(invalid("#EXTM3U\n" + String(repeating: "\n", count: 100_000))?.line == 100_001)
    }

    /// A URI with any scheme but http or https — in a segment, a variant or a key — is refused:
    /// nothing but the network may be read.
    @Test(arguments: ["file:///etc/passwd", "FILE:/etc/passwd", "pipe:0", "concat:a.ts|b.ts", "data:text/plain,hello",
                      "ftp://example.com/a.ts", "C:\\audio\\a.ts", "crypto+file:///etc/passwd"])
    func aSchemeOtherThanHTTPIsRefused(_ uri: String) {
        let inSegment = refusal("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\nok.ts\n#EXTINF:2,\n\(uri)\n#EXT-X-ENDLIST\n")
        let inVariant = refusal("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1000\n\(uri)\n")
        let inKey = refusal("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-KEY:METHOD=AES-128,URI=\"\(uri)\"\n#EXTINF:2,\nok.ts\n")
        for error in [inSegment, inVariant, inKey] {
            switch error {
            case .network(let url, .schemeNotAllowed(let scheme))?:
                #expect(url == uri)
                #expect(scheme != "http" && scheme != "https" && !scheme.isEmpty)
            case .invalidPlaylist(_, let line?, _)?:
                // Only for what is not a URI at all (no scheme can be read from it).
                #expect(line >= 2, "\(uri)")
                #expect(HLSPlaylist.explicitScheme(uri) == nil, "\(uri): \(String(describing: error))")
            default:
                Issue.record("\(uri) was not refused: \(String(describing: error))")
            }
        }
    }

    /// What only looks like an FFmpeg protocol but has no scheme is either not a URI at all
    /// (refused) or, written as a relative path, an http request on the playlist's server —
    /// never a local file.
    @Test func aRelativePathWithAColonStaysOnTheServer() throws {
        #expect(invalid("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\nsubfile,,start,0,end,0,,:/etc/passwd\n")?.line == 4)
        let m = try media("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\n./subfile,,start,0,end,0,,:/etc/passwd\n")
        #expect(m.segments.first?.url.scheme == "https")
        #expect(m.segments.first?.url.host == "example.com")
    }

    @Test func explicitSchemesAreRecognised() {
        #expect(HLSPlaylist.explicitScheme("file:///etc/passwd") == "file")
        #expect(HLSPlaylist.explicitScheme("HTTP://a/b") == "http")
        #expect(HLSPlaylist.explicitScheme("pipe:0") == "pipe")
        #expect(HLSPlaylist.explicitScheme("seg1.ts") == nil)
        #expect(HLSPlaylist.explicitScheme("/abs/path:with-colon.ts") == nil)
        #expect(HLSPlaylist.explicitScheme("1abc:x") == nil)
    }

    @Test func aes128DecryptsWhatOpenSSLEncrypted() throws {
        // Encrypted with the openssl command (PKCS7 padding is its default), decrypted here.
        let plain = Array("Tonearm HLS AES-128 test: forty bytes!!!".utf8)
        let key = Array(UInt8(0)...15), iv = Array((UInt8(0)...15).reversed())
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tonearm-aes-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("plain"), output = dir.appendingPathComponent("cipher")
        try Data(plain).write(to: input)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        p.arguments = ["enc", "-aes-128-cbc", "-K", "000102030405060708090a0b0c0d0e0f", "-iv", "0f0e0d0c0b0a09080706050403020100",
                       "-in", input.path, "-out", output.path]
        try p.run()
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
        let cipher = Array(try Data(contentsOf: output))
        #expect(cipher.count == 48)  // 40 bytes and 8 of padding
        #expect(try AES128.decryptCBC(cipher, key: key, iv: iv) == plain)
        // A wrong key, a short key, a partial block: typed failures.
        var wrong = key
        wrong[0] ^= 0xff
        #expect(throws: NetworkFailure.self) { _ = try AES128.decryptCBC(cipher, key: Array(key.prefix(8)), iv: iv) }
        #expect(throws: NetworkFailure.self) { _ = try AES128.decryptCBC(Array(cipher.prefix(40)), key: key, iv: iv) }
        // With a wrong key the padding is almost always bad; when it is not, the bytes differ.
        let result = Result { () throws(NetworkFailure) in try AES128.decryptCBC(cipher, key: wrong, iv: iv) }
        if case .success(let garbage) = result { #expect(garbage != plain) }
    }
}
