// SPDX-License-Identifier: GPL-3.0-or-later
import Glibc

/// Charset detection and repair for tag text.
///
/// Tags are supposed to be UTF-8 (Vorbis, MP4, APEv2), UTF-16, or ISO-8859-1 (ID3). In practice a
/// great many files — Chinese collections above all — carry GBK or Big5 bytes in fields declared
/// as ISO-8859-1 (or in ID3v1, which has no charset at all). FFmpeg decodes such ID3v2 frames as
/// Latin-1, which turns "青花瓷" into "Çà»¨´É", and hands ID3v1 and APE values over as raw bytes
/// that are not valid UTF-8. `TagText` undoes both.
///
/// ## The heuristic
///
/// Only text that *could* be misdecoded is touched: a string whose scalars are all ≤ U+00FF and
/// that has at least one scalar ≥ U+0080 (so it round-trips to the original bytes), or bytes that
/// are not valid UTF-8. Everything else is returned unchanged.
///
/// Up to four readings are scored and the highest wins; ties go to UTF-8, then Latin-1:
///    - **UTF-8**, if the bytes are valid UTF-8 without C1 controls: Latin-1 prose essentially
///      never forms valid multi-byte sequences, so this catches UTF-8 written into a "Latin-1"
///      frame (and double-encoded text); it always beats the Latin-1 reading. Short GBK
///      strings, however, are often valid UTF-8 by accident ("状态" is D7B4 CCAC = "״̬"), so
///      the decoded text is scored for plausibility (see `scoreUTF8`): coherent letters of one
///      script score about +1 per byte, combining marks, IPA and other oddities −2 each.
///    - **Latin-1** (Windows-1252 where C1 bytes are its punctuation): an accented letter
///      (À–ÿ except × ÷) standing alone between ASCII bytes scores +2 — that is how accents
///      appear in "Beyoncé", "Motörhead", "Sigur Rós". Two high bytes in a row score +0.5
///      each; letters in runs of three or more, and symbols (¤ ¨ ´ » …) next to other high
///      bytes or glued to an ASCII letter, score −1; C1 bytes −1 (cp1252 punctuation) or −3
///      (unassigned).
///    - **GBK/GB18030** and **Big5 (CP950)**: the bytes must decode without error (iconv);
///      then each double-byte character is scored by the region its bytes fall in: frequently
///      used hanzi (GB2312 level 1, lead B0–D7; Big5 level 1, lead A4–C6) +2, less frequent hanzi
///      +1, CJK punctuation/full-width forms +1, kana +0.5, GBK extension areas 0, symbol
///      extension areas −1, user-defined/reserved areas and GB18030 four-byte sequences −3.
///      A character directly preceded or directly followed by an ASCII letter loses 1 per side —
///      Chinese text rarely glues hanzi to Latin letters, whereas a Latin-1 word like "Ágætis"
///      or "Ärzte" read as Big5 does exactly that.
///    A CJK reading must score above zero, above the Latin-1 reading and above the UTF-8
///    reading to be chosen. The one known ambiguity: a string that is both valid UTF-8 and
///    valid GBK with equal scores (two Cyrillic letters such as "Сд" versus "小写") stays UTF-8.
///
/// Real Latin-1 text usually fails the CJK readings outright (an accented letter followed by a
/// space, punctuation or the end of the string is not a valid double-byte character), and when
/// it does decode, the isolated-letter bonus and the letter-adjacency penalty keep it Latin-1.
/// GBK text read as Latin-1, by contrast, is long runs of high bytes full of symbols.
public enum TagText {
    /// The text of tag bytes in an unknown charset: the best of UTF-8, GBK, Big5 and Latin-1
    /// per the heuristic above (valid UTF-8 that stays within U+00FF is then checked with
    /// `repair(_:)`). Never fails; the result never contains U+FFFD unless the input did.
    /// Known limit: a single Cyrillic/Greek/Hebrew letter in UTF-8 whose two bytes are also a
    /// frequent GBK hanzi ("и" = D0 B8 = "懈") is read as GBK.
    public static func decode<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        let array = Array(bytes)
        if !array.contains(where: { $0 >= 0x80 }) { return String(decoding: array, as: UTF8.self) }
        // Valid UTF-8 within U+00FF: the Latin-1 repair question. Beyond it: UTF-8 is scored
        // against GBK/Big5, since short GBK strings are often valid UTF-8 by accident.
        if let s = String(validating: array, as: UTF8.self), s.unicodeScalars.allSatisfy({ $0.value <= 0xFF }) {
            return repair(s)
        }
        return detect(array)
    }

    /// Repairs a string that a decoder produced by reading non-Latin-1 bytes as Latin-1.
    /// Strings with any scalar above U+00FF, and pure-ASCII strings, are returned unchanged;
    /// real Latin-1 text ("Beyoncé", "Motörhead") is returned unchanged.
    public static func repair(_ s: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(s.unicodeScalars.count)
        var high = false
        for u in s.unicodeScalars {
            guard u.value <= 0xFF else { return s }
            if u.value >= 0x80 { high = true }
            bytes.append(UInt8(u.value))
        }
        guard high else { return s }
        return detect(bytes, latin1: s)
    }

    /// Converts `bytes` from `charset` (an iconv name such as "GB18030") to a string, or nil if
    /// the charset is unknown or the bytes are not valid in it.
    public static func convert(_ bytes: [UInt8], from charset: String) -> String? {
        if bytes.isEmpty { return "" }
        guard let cd = iconv_open("UTF-8", charset), Int(bitPattern: cd) != -1 else { return nil }
        defer { iconv_close(cd) }
        var input = bytes.map { CChar(bitPattern: $0) }
        var output = [UInt8](repeating: 0, count: bytes.count * 4 + 16)
        let written: Int? = input.withUnsafeMutableBufferPointer { inBuf in
            output.withUnsafeMutableBytes { outRaw -> Int? in
                let outBuf = outRaw.bindMemory(to: CChar.self)
                var inPtr = inBuf.baseAddress
                var inLeft = inBuf.count
                var outPtr = outBuf.baseAddress
                var outLeft = outBuf.count
                let r = iconv(cd, &inPtr, &inLeft, &outPtr, &outLeft)
                if r == -1 || inLeft != 0 { return nil }
                return outBuf.count - outLeft
            }
        }
        guard let n = written else { return nil }
        return String(validating: output[0..<n], as: UTF8.self)
    }

    // MARK: - Detection

    private static func detect(_ bytes: [UInt8], latin1: String? = nil) -> String {
        var utf8 = String(validating: bytes, as: UTF8.self)
        if let u = utf8, u.unicodeScalars.contains(where: { (0x80...0x9F).contains($0.value) }) { utf8 = nil }
        // A CJK reading must beat zero, the Latin-1 reading and (if valid) the UTF-8 reading.
        var floor = max(0, scoreLatin1(bytes))
        if let u = utf8 { floor = max(floor, scoreUTF8(u)) }
        var best: (score: Double, text: String)? = nil
        if let s = scoreDoubleByte(bytes, gb18030: true, classify: classifyGBK), s > floor,
           let t = convert(bytes, from: "GB18030") {
            best = (s, t)
        }
        if let s = scoreDoubleByte(bytes, gb18030: false, classify: classifyBig5), s > floor,
           s > (best?.score ?? -.infinity),
           let t = convert(bytes, from: "CP950") ?? convert(bytes, from: "BIG5") {
            best = (s, t)
        }
        if let best { return best.text }
        if let utf8 { return utf8 }
        return latin1Text(bytes, known: latin1)
    }

    private enum ScriptClass: Equatable { case latin, greek, cyrillic, hebrew, arabic, symbol, wide, odd }

    private static func scriptClass(_ v: UInt32) -> ScriptClass {
        switch v {
        case 0xC0...0x17F where v != 0xD7 && v != 0xF7: .latin
        case 0x386...0x3CE: .greek
        case 0x400...0x45F: .cyrillic
        case 0x5D0...0x5EA: .hebrew
        case 0x621...0x64A: .arabic
        case 0xA0...0xBF, 0xD7, 0xF7: .symbol
        case 0x800...: .wide
        default: .odd
        }
    }

    /// Plausibility of valid UTF-8 text (same scale as the other readings: about +1 per byte
    /// for ordinary text). Latin letters next to other letters +2 (alone +1); Greek, Cyrillic,
    /// Hebrew, Arabic letters +2 when the string has two or more of that script (one alone
    /// +1.5); characters from three-byte sequences (CJK…) +3, private use −3; symbols 0;
    /// a modifier letter next to an ASCII letter +1; anything else in U+0080–U+07FF (combining
    /// marks, IPA, other modifier letters, Armenian…) −2.
    /// GBK bytes that happen to be valid UTF-8 mostly decode to those odd characters.
    private static func scoreUTF8(_ u: String) -> Double {
        let scalars = Array(u.unicodeScalars)
        let classes = scalars.map { $0.value < 0x80 ? ScriptClass.symbol : scriptClass($0.value) }
        func asciiLetter(_ i: Int) -> Bool {
            i >= 0 && i < scalars.count && scalars[i].value < 0x80 && isASCIILetter(UInt8(scalars[i].value))
        }
        var score = 0.0
        for (i, s) in scalars.enumerated() where s.value >= 0x80 {
            switch classes[i] {
            case .latin:
                let near = asciiLetter(i - 1) || asciiLetter(i + 1)
                    || (i > 0 && classes[i - 1] == .latin && scalars[i - 1].value >= 0x80)
                    || (i + 1 < scalars.count && classes[i + 1] == .latin)
                score += near ? 2 : 1
            case .greek, .cyrillic, .hebrew, .arabic:
                let c = classes[i]
                score += classes.lazy.filter { $0 == c }.count >= 2 ? 2 : 1.5
            case .symbol: break
            case .wide: score += (0xE000...0xF8FF).contains(s.value) ? -3 : 3
            case .odd:
                // Modifier letters (ʻ ˈ ː) do occur inside Latin words ("ʻOkina").
                let modifier = (0x2B0...0x2FF).contains(s.value) && (asciiLetter(i - 1) || asciiLetter(i + 1))
                score += modifier ? 1 : -2
            }
        }
        return score
    }

    /// Latin-1, except that C1 bytes are read as Windows-1252 (curly quotes, dashes, €) when
    /// that charset assigns them — Windows taggers write cp1252 into "Latin-1" frames.
    private static func latin1Text(_ bytes: [UInt8], known: String?) -> String {
        if bytes.contains(where: { (0x80...0x9F).contains($0) }),
           let t = convert(bytes, from: "CP1252") {
            return t
        }
        if let known { return known }
        var s = String.UnicodeScalarView()
        for b in bytes { s.append(Unicode.Scalar(b)) }
        return String(s)
    }

    private static func isASCIILetter(_ b: UInt8) -> Bool {
        (0x41...0x5A).contains(b) || (0x61...0x7A).contains(b)
    }

    private static func scoreLatin1(_ b: [UInt8]) -> Double {
        var score = 0.0
        var i = 0
        while i < b.count {
            guard b[i] >= 0x80 else { i += 1; continue }
            var j = i
            while j < b.count, b[j] >= 0x80 { j += 1 }
            let run = j - i
            for k in i..<j {
                let c = b[k]
                let letter = c >= 0xC0 && c != 0xD7 && c != 0xF7
                if c < 0xA0 {
                    score -= [0x80, 0x85, 0x91, 0x92, 0x93, 0x94, 0x96, 0x97].contains(c) ? 1 : 3
                } else if letter {
                    score += run == 1 ? 2 : (run == 2 ? 0.5 : -1)
                } else {
                    // A lone symbol (© ½ ¿ «) is fine between spaces or digits, not glued to letters.
                    let glued = (k > 0 && isASCIILetter(b[k - 1])) || (k + 1 < b.count && isASCIILetter(b[k + 1]))
                    score += run == 1 && !glued ? 0 : -1
                }
            }
            i = j
        }
        return score
    }

    /// Scores a double-byte reading; nil when the bytes are not structurally valid in it.
    /// `classify` scores one character from its lead and trail bytes (nil: invalid pair).
    private static func scoreDoubleByte(_ b: [UInt8], gb18030: Bool,
                                        classify: (UInt8, UInt8) -> Double?) -> Double? {
        var score = 0.0
        var i = 0
        while i < b.count {
            let lead = b[i]
            guard lead >= 0x80 else { i += 1; continue }
            guard i + 1 < b.count else { return nil }
            let trail = b[i + 1]
            // GB18030 four-byte sequence: lead, digit, lead, digit. Valid but rare in tags.
            if gb18030, (0x30...0x39).contains(trail) {
                guard i + 3 < b.count, (0x81...0xFE).contains(b[i + 2]), (0x30...0x39).contains(b[i + 3])
                else { return nil }
                score -= 3
                i += 4
                continue
            }
            guard let s = classify(lead, trail) else { return nil }
            score += s
            if i > 0, isASCIILetter(b[i - 1]) { score -= 1 }
            if i + 2 < b.count, isASCIILetter(b[i + 2]) { score -= 1 }
            i += 2
        }
        return score
    }

    private static func classifyGBK(_ lead: UInt8, _ trail: UInt8) -> Double? {
        guard (0x81...0xFE).contains(lead), (0x40...0xFE).contains(trail), trail != 0x7F else { return nil }
        if trail >= 0xA1 {
            switch lead {
            case 0xB0...0xD7: return 2      // GB2312 level 1: the 3755 most frequent hanzi
            case 0xD8...0xF7: return 1      // GB2312 level 2
            case 0xA1, 0xA3: return 1       // CJK punctuation, full-width ASCII
            case 0xA4, 0xA5: return 0.5     // hiragana, katakana
            case 0xA2, 0xA6...0xA9: return 0 // numerals, Greek, Cyrillic, pinyin, box drawing
            case 0x81...0xA0: return 0      // GBK/3 extension hanzi
            default: return -3              // user-defined areas AA–AF, F8–FE
            }
        }
        switch lead {
        case 0xA1...0xA7: return -3         // user-defined area
        case 0xA8, 0xA9: return -1          // GBK/5 symbols
        default: return 0                   // GBK/3, GBK/4 extension hanzi
        }
    }

    private static func classifyBig5(_ lead: UInt8, _ trail: UInt8) -> Double? {
        guard (0x81...0xFE).contains(lead),
              (0x40...0x7E).contains(trail) || (0xA1...0xFE).contains(trail) else { return nil }
        switch lead {
        case 0xA4...0xC5: return 2          // level 1: frequently used hanzi
        case 0xC6 where trail <= 0x7E: return 2
        case 0xC9...0xF9: return 1          // level 2: less frequently used hanzi
        case 0xA1...0xA3: return 1          // punctuation and symbols
        default: return -3                  // reserved / user-defined
        }
    }
}
