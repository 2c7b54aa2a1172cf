// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
@testable import TonearmDaemon
import TonearmMPDProtocol

/// The byte writer of the long answers writes what the `String` answers wrote: the same lines as
/// `MPDResponse.pair`, the same decimals as `String(format: "%.3f")` (rounding of the exact
/// binary value included), the same integers as `String(_:)`.
struct MPDAnswerWriterTests {
    static func text(_ write: (inout MPDAnswerWriter) -> Void) -> String {
        var w = MPDAnswerWriter()
        write(&w)
        return String(decoding: w.bytes, as: UTF8.self)
    }

    @Test func fixedThreeDecimalsAreThoseOfPrintf() {
        var values: [Double] = [0, 0.5, 0.0625, 0.0005, 0.0015, 0.9995, 1.0005, 2.5e-4, 1.2345, 1.2355, 0.1 + 0.2, 59.9996, 86_399.9995,
                                123_456_789.0625, 1e14, 9.99e14, 1e15, 1e300, -0.0, -1.5, -0.0005, .infinity, -.infinity, .nan,
                                Double.leastNonzeroMagnitude, Double.greatestFiniteMagnitude]
        // Exact ties (k + 0.5 thousandths that binary can hold) and their neighbours.
        for k in stride(from: 0, to: 4000, by: 1) {
            let tie = (Double(k) + 0.5) / 1000
            values += [tie, tie.nextUp, tie.nextDown]
        }
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<20_000 { values.append(Double.random(in: 0..<100_000, using: &rng)) }
        for _ in 0..<2_000 { values.append(Double(Int.random(in: 0..<1_000_000, using: &rng)) / 64) }
        for v in values {
            #expect(Self.text { $0.fixed3(v) } == String(format: "%.3f", v), "\(v)")
        }
    }

    @Test func integersAreThoseOfString() {
        var values = [0, 1, 9, 10, 99, 100, 12_345, -1, -10, -987_654, Int.max, Int.min, Int.min + 1]
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<2_000 { values.append(Int.random(in: .min ... .max, using: &rng)) }
        for v in values {
            #expect(Self.text { $0.integer(v) } == String(v))
            #expect(Self.text { $0.pair("Pos", v) } == MPDResponse.pair("Pos", String(v)))
        }
    }

    @Test func pairsAreThoseOfMPDResponseAlsoWithLineBreaks() {
        for value in ["", "plain", "Ünïcödé ✓", "a\nb", "a\rb", "a\r\nb", "\r\n\r\n", "\n\r", "x\r", "\ré", "e\u{301}\nz"] {
            #expect(Self.text { $0.pair("Title", value) } == MPDResponse.pair("Title", value), "\(Array(value.utf8))")
        }
    }
}
