// SPDX-License-Identifier: GPL-3.0-or-later

/// Takes Shoutcast / Icecast metadata out of a stream's body: after every `metaint` bytes of
/// audio comes one length byte L and L × 16 bytes of text (`StreamTitle='…';StreamUrl='…';`,
/// zero-padded); L = 0 means "unchanged". Fed the body in pieces of any size, it returns the
/// audio alone and reports each metadata block.
///
/// A value type used by one thread (a source's fetch thread).
package struct ICYDemuxer: Sendable {
    package let metaint: Int
    private var untilMeta: Int
    private var metaLength: Int?
    private var meta: [UInt8] = []

    package init(metaint: Int) {
        self.metaint = metaint
        untilMeta = metaint
    }

    /// Splits `input` into audio (appended to `audio`) and complete metadata blocks (returned,
    /// as their fields).
    package mutating func feed(_ input: UnsafeRawBufferPointer, audio: inout [UInt8]) -> [[String: String]] {
        var blocks: [[String: String]] = []
        var i = 0
        while i < input.count {
            if untilMeta > 0 {
                let n = min(untilMeta, input.count - i)
                audio.append(contentsOf: UnsafeRawBufferPointer(rebasing: input[i..<(i + n)]))
                untilMeta -= n
                i += n
            } else if metaLength == nil {
                metaLength = Int(input[i]) * 16
                i += 1
                meta.removeAll(keepingCapacity: true)
                if metaLength == 0 { metaLength = nil; untilMeta = metaint }
            } else if let total = metaLength {
                let n = min(total - meta.count, input.count - i)
                meta.append(contentsOf: UnsafeRawBufferPointer(rebasing: input[i..<(i + n)]))
                i += n
                if meta.count == total {
                    blocks.append(Self.fields(meta))
                    metaLength = nil
                    untilMeta = metaint
                }
            }
        }
        return blocks
    }

    /// The `Key='value';` fields of a metadata block (the text up to the padding). Values may
    /// contain `'` (titles do); a field ends at `';` followed by a key or the end.
    package static func fields(_ block: [UInt8]) -> [String: String] {
        let bytes = block.prefix { $0 != 0 }
        // Metadata is meant to be UTF-8; old servers send Latin-1.
        let text = String(validating: bytes, as: UTF8.self) ?? String(bytes.map { Character(Unicode.Scalar($0)) })
        var result: [String: String] = [:]
        var rest = Substring(text)
        while let eq = rest.range(of: "='") {
            let key = String(rest[..<eq.lowerBound]).trimmingCharacters(in: [";", " "])
            let afterQuote = rest[eq.upperBound...]
            var end = afterQuote.endIndex
            var search = afterQuote.startIndex
            while let close = afterQuote[search...].range(of: "';") {
                let next = afterQuote[close.upperBound...]
                if next.isEmpty || next.range(of: "='") != nil && !next.prefix(while: { $0 != "=" }).contains("'") {
                    end = close.lowerBound
                    break
                }
                search = close.upperBound
            }
            if end == afterQuote.endIndex, afterQuote.hasSuffix("'") { end = afterQuote.index(before: afterQuote.endIndex) }
            result[key] = String(afterQuote[..<end])
            rest = end == afterQuote.endIndex ? "" : afterQuote[end...].dropFirst(2)
        }
        return result
    }
}
