// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Glibc

/// Builders for tagged media fixtures: raw tag bytes (ID3v1, ID3v2.3/2.4, APEv2, FLAC picture
/// blocks) written by hand, and audio made with the `ffmpeg` CLI.
public enum TagFixtures {
    /// `text` encoded in `charset` (an iconv name: "GBK", "BIG5", "ISO-8859-1", "UTF-16LE"…).
    /// Throws if the charset is unknown or cannot represent the text.
    public static func encode(_ text: String, _ charset: String) throws -> [UInt8] {
        guard let cd = iconv_open(charset, "UTF-8"), Int(bitPattern: cd) != -1 else {
            throw TestSupportError("iconv: unknown charset \(charset)")
        }
        defer { iconv_close(cd) }
        var input = Array(text.utf8).map { CChar(bitPattern: $0) }
        var output = [UInt8](repeating: 0, count: input.count * 4 + 16)
        let n: Int = input.withUnsafeMutableBufferPointer { inBuf in
            output.withUnsafeMutableBytes { raw in
                let outBuf = raw.bindMemory(to: CChar.self)
                var ip = inBuf.baseAddress, il = inBuf.count
                var op = outBuf.baseAddress, ol = outBuf.count
                let r = iconv(cd, &ip, &il, &op, &ol)
                return r == -1 || il != 0 ? -1 : outBuf.count - ol
            }
        }
        guard n >= 0 else { throw TestSupportError("iconv: cannot encode \(text) in \(charset)") }
        return Array(output[0..<n])
    }

    // MARK: ID3v1

    /// A 128-byte ID3v1.1 tag; fields are truncated/padded with NULs.
    public static func id3v1(title: [UInt8], artist: [UInt8], album: [UInt8] = [], year: String = "",
                             comment: [UInt8] = [], track: UInt8 = 0, genre: UInt8 = 255) -> [UInt8] {
        func field(_ b: [UInt8], _ n: Int) -> [UInt8] { Array(b.prefix(n)) + [UInt8](repeating: 0, count: max(0, n - b.count)) }
        return Array("TAG".utf8) + field(title, 30) + field(artist, 30) + field(album, 30)
            + field(Array(year.utf8), 4) + field(comment, 28) + [0, track, genre]
    }

    // MARK: ID3v2

    /// An ID3v2 frame: `id` (four letters) and its body. `version` 3 uses a plain 32-bit size,
    /// 4 a syncsafe one.
    public static func id3v2Frame(_ id: String, _ body: [UInt8], version: Int = 3) -> [UInt8] {
        let size = version == 4 ? syncsafe(body.count) : be32(body.count)
        return Array(id.utf8) + size + [0, 0] + body
    }

    /// A text frame with an explicit encoding byte (0 Latin-1, 1 UTF-16 with BOM, 3 UTF-8) and
    /// already-encoded text bytes.
    public static func id3v2TextFrame(_ id: String, encoding: UInt8, _ text: [UInt8], version: Int = 3) -> [UInt8] {
        id3v2Frame(id, [encoding] + text, version: version)
    }

    /// A UTF-16 (encoding 1, little-endian with BOM) text frame.
    public static func id3v2UTF16Frame(_ id: String, _ text: String, version: Int = 3) throws -> [UInt8] {
        id3v2TextFrame(id, encoding: 1, [0xFF, 0xFE] + (try encode(text, "UTF-16LE")), version: version)
    }

    /// A TXXX frame (Latin-1 description and value).
    public static func id3v2TXXX(_ description: String, _ value: String, version: Int = 3) -> [UInt8] {
        id3v2Frame("TXXX", [0] + Array(description.utf8) + [0] + Array(value.utf8), version: version)
    }

    /// A whole ID3v2 tag (header + frames + 64 bytes of padding).
    public static func id3v2Tag(version: Int = 3, frames: [[UInt8]]) -> [UInt8] {
        let body = frames.flatMap { $0 } + [UInt8](repeating: 0, count: 64)
        return Array("ID3".utf8) + [UInt8(version), 0, 0] + syncsafe(body.count) + body
    }

    // MARK: APEv2

    /// An APEv2 tag with header and footer. Items are (key, value bytes, binary?).
    public static func apev2(_ items: [(String, [UInt8], Bool)]) -> [UInt8] {
        var body: [UInt8] = []
        for (k, v, binary) in items {
            body += le32(v.count) + le32(binary ? 2 : 0) + Array(k.utf8) + [0] + v
        }
        let size = body.count + 32
        func block(_ flags: UInt32) -> [UInt8] {
            Array("APETAGEX".utf8) + le32(2000) + le32(size) + le32(items.count) + le32(Int(flags))
                + [UInt8](repeating: 0, count: 8)
        }
        return block(0xA000_0000) + body + block(0x8000_0000)
    }

    // MARK: FLAC picture

    /// A FLAC METADATA_BLOCK_PICTURE body (front cover) for `image` of type `mime`.
    public static func flacPicture(_ image: [UInt8], mime: String, width: Int = 16, height: Int = 16) -> [UInt8] {
        be32(3) + be32(mime.utf8.count) + Array(mime.utf8) + be32(5) + Array("cover".utf8)
            + be32(width) + be32(height) + be32(24) + be32(0) + be32(image.count) + image
    }

    // MARK: Audio via ffmpeg

    /// Runs `ffmpeg -v error -y <arguments>`; throws with its stderr on failure.
    public static func ffmpeg(_ arguments: [String]) throws {
        let r = try run("ffmpeg", ["-nostdin", "-hide_banner", "-v", "error", "-y"] + arguments)
        guard r.status == 0 else { throw TestSupportError("ffmpeg \(arguments.joined(separator: " ")): \(r.stderr)") }
    }

    /// A 0.2 s tone as an untagged MP3 (no ID3v2, no Xing frame) at `path`.
    public static func plainMP3(_ path: String) throws {
        try ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=0.2", "-c:a", "libmp3lame",
                    "-id3v2_version", "0", "-write_xing", "0", path])
    }

    /// A 16×16 red PNG at `path`; returns its bytes.
    @discardableResult
    public static func coverPNG(_ path: String) throws -> [UInt8] {
        try ffmpeg(["-f", "lavfi", "-i", "color=red:s=16x16", "-frames:v", "1", path])
        return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Writes `prefix + file + suffix` back to `path`.
    public static func wrap(_ path: String, prefix: [UInt8] = [], suffix: [UInt8] = []) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        try Data(prefix + Array(data) + suffix).write(to: URL(fileURLWithPath: path))
    }

    // MARK: Bytes

    public static func be32(_ v: Int) -> [UInt8] { [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    public static func le32(_ v: Int) -> [UInt8] { be32(v).reversed() }
    public static func syncsafe(_ v: Int) -> [UInt8] {
        [UInt8(v >> 21 & 0x7F), UInt8(v >> 14 & 0x7F), UInt8(v >> 7 & 0x7F), UInt8(v & 0x7F)]
    }
}
