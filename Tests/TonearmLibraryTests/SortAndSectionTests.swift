// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
@testable import TonearmLibrary
import TonearmTestSupport

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

    /// The sort key's ASCII path gives the general path's key: every ASCII character alone and
    /// around articles and numbers, and pseudo-random ASCII strings of letters, digits,
    /// punctuation, white space (CR LF too) and articles.
    @Test func theSortKeysASCIIPathGivesTheUnicodePathsKey() {
        var mismatches: [String] = []
        func check(_ s: String) {
            guard let fast = SortKey.makeASCII(s) else { mismatches.append("no fast path: \(s.debugDescription)"); return }
            let general = SortKey.makeUnicode(s)
            if fast != general { mismatches.append("\(s.debugDescription): \(fast.debugDescription) ≠ \(general.debugDescription)") }
        }
        for b in UInt8(0)..<0x80 {
            let c = String(decoding: [b], as: UTF8.self)
            for s in [c, "The\(c)Band", "the \(c)", "\(c)A Song 07", "An\(c)", "(\(c)) a 2", "\(c)\r\nx"] { check(s) }
        }
        var state: UInt32 = 11
        let pieces = ["the ", "The ", "THE ", "a ", "A ", "an ", "An", "the", " ", "  ", "\t", "\r\n", "\n", "(", ")", ".", "'",
                      "-", "#", "007", "2", "10", "x", "Band", "zulu", "0"]
        for _ in 0..<3_000 {
            var s = ""
            for _ in 0..<Int(state % 7) {
                state = state &* 1_664_525 &+ 1_013_904_223
                s += pieces[Int(state >> 16) % pieces.count]
            }
            state = state &* 1_664_525 &+ 1_013_904_223
            check(s)
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(10))")
        #expect(SortKey.makeASCII("Beyoncé") == nil)
        #expect(SortKey.make("The Band") == "1band")
        #expect(SortKey.make("Track 10") == "1track 210")
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

/// Numbers in names sort by their value ("natural" order) in keys, listings and sections.
@Suite struct NaturalOrderTests {
    @Test func numbersInKeysSortByValue() {
        let names = ["Track 1", "Track 02", "Track 9", "Track 10", "Track 100", "Track 100b", "Track b"]
        #expect(names.reversed().sorted { SortKey.make($0) < SortKey.make($1) } == names)
        #expect(SortKey.make("第2号") < SortKey.make("第10号"))
        #expect(SortKey.make("Vol. 9: Part 12") < SortKey.make("Vol. 10: Part 1"))
        #expect(SortKey.make("2 Unlimited") < SortKey.make("10cc") && SortKey.section(of: "10cc") == "#")
        #expect(SortKey.numbered("track 2") == "track 12" && SortKey.numbered("a007b") == "a17b" && SortKey.numbered("0") == "10")
        #expect(SortKey.numbered(String(repeating: "9", count: 100)).count == 101, "a very long number keeps its digits")
    }

    /// A generated library whose titles, albums and artists differ by a number: songs, albums
    /// and artists are listed with 2 before 10, and their sections follow.
    @Test func listingsPutTwoBeforeTen() async throws {
        let dir = try TempDir("natural-order")
        defer { dir.remove() }
        let root = dir.file("Music")
        let base = try LibraryFixtures.baseMP3(in: root)
        func track(_ title: String, _ artist: String, _ album: String, _ n: Int) throws {
            try LibraryFixtures.write(LibraryFixtures.Track(path: "\(artist)/\(album)/\(n).mp3", title: title, artist: artist,
                                                            album: album, genre: "Test", track: n, trackCount: 2, year: 2020),
                                      base: base, png: [], root: root)
        }
        try track("Track 10", "Artist 10", "Collection 10", 1)
        try track("Track 9", "Artist 10", "Collection 10", 2)
        try track("第10号", "Artist 2", "Collection 2", 1)
        try track("第2号", "Artist 2", "Collection 2", 2)
        let library = try MediaLibrary(path: dir.file("library.sqlite"))
        try await library.scanToEnd(folders: [root])

        #expect(try MediaQuery.songs().items(in: library).map(\.title) == ["第2号", "第10号", "Track 9", "Track 10"])
        #expect(try MediaQuery.songs().itemSections(in: library).map(\.title) == ["D", "T"])
        #expect(try MediaQuery.albums().collectionSummaries(in: library).map(\.name) == ["Collection 2", "Collection 10"])
        #expect(try MediaQuery.albums().collections(in: library).map(\.name) == ["Collection 2", "Collection 10"])
        #expect(try MediaQuery.artists().collectionSummaries(in: library).map(\.name) == ["Artist 2", "Artist 10"])
        #expect(try MediaQuery.songs().sorted(by: .album).items(in: library).map(\.albumTitle)
                == ["Collection 2", "Collection 2", "Collection 10", "Collection 10"])
    }
}
