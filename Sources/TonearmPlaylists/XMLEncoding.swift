// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// The 8-bit encodings an XSPF document may declare (`<?xml version="1.0" encoding="ISO-8859-1"?>`)
/// besides UTF-8, transcoded to UTF-8 before Foundation's XMLParser sees the document (which is
/// only given valid UTF-8: it crashes on some bytes that are not).
enum XMLEncoding: Equatable {
    case utf8
    /// ISO-8859-1: every byte is the code point of the same number, but 0x80–0x9F are C1 control
    /// characters, never text (a file using them is windows-1252 and should say so).
    case latin1
    /// windows-1252: ISO-8859-1 with printable characters at 0x80–0x9F (five bytes undefined).
    case windows1252
    /// US-ASCII: bytes up to 0x7F.
    case ascii

    /// The encoding a declaration names (case and `-`/`_` ignored); nil for one not supported
    /// here.
    init?(label: String) {
        switch label.lowercased().filter({ $0 != "-" && $0 != "_" }) {
        case "utf8": self = .utf8
        case "iso88591", "latin1", "l1", "isoir100", "cp819", "ibm819": self = .latin1
        case "windows1252", "cp1252", "xcp1252": self = .windows1252
        case "usascii", "ascii", "iso646us", "ansix3.41968": self = .ascii
        default: return nil
        }
    }

    /// The name written in the rewritten declaration and in messages.
    var name: String {
        switch self {
        case .utf8: "UTF-8"
        case .latin1: "ISO-8859-1"
        case .windows1252: "windows-1252"
        case .ascii: "US-ASCII"
        }
    }

    /// windows-1252's characters at 0x80–0x9F (0: undefined).
    private static let windows1252High: [UInt32] = [
        0x20AC, 0, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0, 0x017D, 0,
        0, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0, 0x017E, 0x0178,
    ]

    /// The character `byte` stands for, or nil when it is not text in this 8-bit encoding.
    func scalar(_ byte: UInt8) -> Unicode.Scalar? {
        switch self {
        case .utf8: return byte < 0x80 ? Unicode.Scalar(byte) : nil
        case .ascii: return byte < 0x80 ? Unicode.Scalar(byte) : nil
        case .latin1: return (0x80...0x9F).contains(byte) ? nil : Unicode.Scalar(byte)
        case .windows1252:
            guard (0x80...0x9F).contains(byte) else { return Unicode.Scalar(byte) }
            let v = Self.windows1252High[Int(byte - 0x80)]
            return v == 0 ? nil : Unicode.Scalar(v)
        }
    }

    /// The encoding a document's XML declaration names: `.declared(nil)` when there is no
    /// declaration or it names none (or UTF-16), `.unsupported(label)` for a name not supported.
    enum Declared: Equatable {
        case declared(XMLEncoding?)
        case unsupported(String)
    }

    /// The `encoding` of the XML declaration at the start of `data` (after a UTF-8 byte-order
    /// mark), read as ASCII.
    static func declared(in data: Data) -> Declared {
        var bytes = data.prefix(512)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        guard bytes.starts(with: Array("<?xml".utf8)), let end = bytes.firstRange(of: Array("?>".utf8)) else { return .declared(nil) }
        let declaration = String(decoding: bytes[bytes.startIndex..<end.lowerBound].map { $0 < 0x80 ? $0 : 0x3F }, as: UTF8.self)
        guard let m = declaration.firstMatch(of: /\sencoding\s*=\s*(?:"([^"]*)"|'([^']*)')/) else { return .declared(nil) }
        let label = String(m.output.1 ?? m.output.2 ?? "")
        // UTF-16 without its byte-order mark: left to the parser, as before.
        if label.lowercased().filter({ $0 != "-" && $0 != "_" }).hasPrefix("utf16") { return .declared(nil) }
        guard let encoding = XMLEncoding(label: label) else { return .unsupported(label) }
        return .declared(encoding)
    }

    /// `data`, an 8-bit document declared in this encoding, as UTF-8 with its declaration
    /// saying so (`encoding="UTF-8"`); or the line and value of the first byte that is not
    /// text in this encoding.
    func transcode(_ data: Data) -> Result<Data, InvalidByte> {
        var out = ""
        out.unicodeScalars.reserveCapacity(data.count)
        var line = 1
        for byte in data {
            guard let scalar = scalar(byte) else { return .failure(InvalidByte(line: line, byte: byte)) }
            if byte == 0x0A { line += 1 }
            out.unicodeScalars.append(scalar)
        }
        // The declaration, now UTF-8, says so (the parser would read the bytes as the old one).
        if let m = out.firstMatch(of: /^<\?xml[^>]*?\sencoding\s*=\s*(?:"[^"]*"|'[^']*')/) {
            let head = out[m.range]
            if let e = head.firstMatch(of: /(?:"[^"]*"|'[^']*')$/) {
                out.replaceSubrange(e.range, with: "\"UTF-8\"")
            }
        }
        return .success(Data(out.utf8))
    }

    struct InvalidByte: Error, Equatable {
        var line: Int
        var byte: UInt8
    }
}
