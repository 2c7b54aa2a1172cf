// SPDX-License-Identifier: GPL-3.0-or-later
import Testing
import TonearmCore

/// `AudioMetadata.year` reads ASCII dates from their bytes; it must give what taking the
/// leading numeric Characters gives, for every kind of date text.
@Suite struct AudioMetadataYearTests {
    /// The year as it was read before: the leading numeric Characters, when they are four.
    static func reference(_ date: String?) -> Int? {
        guard let d = date else { return nil }
        let digits = d.prefix(while: { $0.isNumber })
        return digits.count == 4 ? Int(digits) : nil
    }

    static func year(_ date: String?) -> Int? {
        var m = AudioMetadata()
        m.date = date
        return m.year
    }

    @Test(arguments: [nil, "", "2001", "2001-05-04", "1999 ", "199", "20011", "200", "2001\r\n", "2001\u{301}",
                      "2001年", "２００１", "١٩٩٩", "2001٣", "0000", "0042-01", "12345-6", "-2001", " 2001", "2001/2002",
                      "2001.5", "½001", "20½1", "9999x"])
    func knownDates(_ date: String?) {
        #expect(Self.year(date) == Self.reference(date), "\(String(describing: date))")
    }

    @Test func pseudoRandomDates() {
        let pieces = ["1", "9", "0", "2", "-", " ", "\u{301}", "٣", "x", "\r", "\n", "²", "/", "５"]
        var state: UInt64 = 0x5EED
        for _ in 0..<5_000 {
            var text = ""
            state = state &* 6364136223846793005 &+ 1442695040888963407
            var s = state
            for _ in 0..<Int(s % 8) {
                s /= 8
                text += pieces[Int(s % UInt64(pieces.count))]
                s /= UInt64(pieces.count)
            }
            #expect(Self.year(text) == Self.reference(text), "\(text.unicodeScalars.map { String($0.value, radix: 16) })")
        }
    }
}
