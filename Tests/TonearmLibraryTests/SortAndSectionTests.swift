// SPDX-License-Identifier: GPL-3.0-or-later
import Testing
@testable import TonearmLibrary

@Suite struct FoldingTests {
    /// The ASCII fast path gives what Foundation's folding gives: every ASCII character alone
    /// and beside others, and pseudo-random ASCII strings with runs of white space.
    @Test func theASCIIPathFoldsAsTheUnicodePath() {
        var mismatches: [String] = []
        func check(_ s: String) {
            guard let fast = SearchKey.foldASCII(s) else { mismatches.append("no fast path: \(s.debugDescription)"); return }
            if fast != SearchKey.foldUnicode(s) { mismatches.append(s.debugDescription) }
        }
        for b in UInt8(0)..<0x80 {
            let c = String(decoding: [b], as: UTF8.self)
            check(c)
            check("A\(c)b")
            check(" \(c)  Z\(c)")
        }
        var state: UInt32 = 7
        let alphabet = Array("AbZz09 \t\n\r\u{0B}\u{0C}\u{1C}\u{1F}-_.,'!?()[]&@".utf8)
        for _ in 0..<2_000 {
            var bytes: [UInt8] = []
            for _ in 0..<Int(state % 24) {
                state = state &* 1_664_525 &+ 1_013_904_223
                bytes.append(alphabet[Int(state >> 16) % alphabet.count])
            }
            state = state &* 1_664_525 &+ 1_013_904_223
            check(String(decoding: bytes, as: UTF8.self))
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(10))")
        #expect(SearchKey.foldASCII("Beyoncé") == nil)
        #expect(SearchKey.fold("  The  BAND\t") == "the band")
    }

    @Test func lettersOfTheirOwnAreSpeltOut() {
        #expect(SearchKey.fold("Ágætis byrjun") == "agaetis byrjun")
        #expect(SearchKey.fold("Łódź") == "lodz")
        #expect(SearchKey.fold("Straße") == "strasse")
        #expect(SearchKey.fold("Œuvre") == "oeuvre")
        #expect(SearchKey.fold("Øystein  Berg ") == "oystein berg")
        #expect(SearchKey.fold("Þór Đorđe") == "thor dorde")
        #expect(SearchKey.fold("Ｆｕｌｌ　Ｗｉｄｔｈ") == "full width")
        #expect(SearchKey.fold("周杰伦") == "周杰伦", "Chinese is kept as it is")
        #expect(SearchKey.fold(nil) == "" && SearchKey.fold(" \t ") == "")
    }
}

@Suite struct SortKeyTests {
    /// Names in the order a listing shows them, with their sections.
    static let expected: [(String, String)] = [
        ("Ásgeir Tónn", "A"), ("Brass Foundry", "B"), ("Cellar Door", "C"), ("陈奕迅", "C"),
        ("邓丽君", "D"), ("Édith Nova", "E"), ("\"Heroes\"", "H"), ("The Lanterns", "L"), ("林俊杰", "L"), ("Łucja Mazur", "L"),
        ("Marrow", "M"), ("Nightjar", "N"), ("Øystein Berg", "O"), ("A Quiet Engine", "Q"),
        ("王菲", "W"), ("Zebra Kings", "Z"), ("张学友", "Z"), ("周杰伦", "Z"), ("zulu Static", "Z"),
        ("Ωμέγα", "Ω"), ("Звёзды", "З"), ("Кино Лето", "К"),
        ("かぜのうた", "か"), ("ガラス", "か"), ("スピカ", "さ"), ("별빛", "ㅂ"), ("하늘", "ㅎ"),
        ("!!!", "#"), ("99 Rivers", "#"),
    ]

    @Test func sectionsFollowTheRule() {
        for (name, section) in Self.expected {
            #expect(SortKey.section(of: name) == section, "\(name)")
        }
        #expect(SortKey.section(of: nil) == "#" && SortKey.section(of: "") == "#")
        #expect(SortKey.section(of: "The") == "T", "an article alone is the name")
    }

    @Test func keysSortInListingOrder() {
        let names = Self.expected.map(\.0)
        let sorted = names.reversed().sorted { SortKey.make($0) < SortKey.make($1) }
        #expect(sorted == names, "the expected list is in listing order")
        let bySection = sorted.map { SortKey.section(of: $0) }
        // Every section's names are contiguous.
        var seen: [String] = []
        for s in bySection where seen.last != s { seen.append(s) }
        #expect(seen.count == Set(seen).count, "sections in order: \(seen)")
        #expect(seen.first == "A" && seen.last == "#")
        let latin = seen.prefix { $0.unicodeScalars.first.map { (65...90).contains($0.value) } ?? false }
        #expect(latin.elementsEqual(latin.sorted()), "A–Z first, in order")
        let pos = { (name: String) in sorted.firstIndex(of: name) ?? -1 }
        #expect(pos("Zebra Kings") < pos("张学友") && pos("张学友") < pos("周杰伦") && pos("周杰伦") < pos("zulu Static"),
                "Chinese among the Latin names by pinyin")
        #expect(pos("zulu Static") < pos("Ωμέγα") && pos("Кино Лето") < pos("かぜのうた") && pos("スピカ") < pos("별빛")
                && pos("하늘") < pos("99 Rivers"), "then other alphabets, kana, Korean, and # last")
        #expect(pos("かぜのうた") < pos("ガラス") && pos("ガラス") < pos("スピカ"), "katakana among hiragana by sound")
    }

    @Test func sectionsOfAListCoverEveryIndexOnce() {
        let sorted = Self.expected.map(\.0).sorted { SortKey.make($0) < SortKey.make($1) }
        let sections = MediaQuery.artists().sections(ofCollections: [])
        #expect(sections.isEmpty)
        let covered = MediaQuery.sections(ofNames: sorted)
        #expect(covered.first?.range.lowerBound == 0 && covered.last?.range.upperBound == sorted.count)
        let contiguous = zip(covered, covered.dropFirst()).allSatisfy { $0.range.upperBound == $1.range.lowerBound }
        #expect(contiguous)
        #expect(covered.map(\.title).first == "A")
        let z = covered.first { $0.title == "Z" }
        #expect(z?.range.count == 4)
    }
}
