// SPDX-License-Identifier: GPL-3.0-or-later
import Testing
import TonearmDSP

/// The one reader of effect and equaliser setting texts (`NAME[:REST]`, `ID=VALUE,…`,
/// `FREQ:GAIN,…`, numbers, loose names).
@Suite struct ParameterTextTests {
    @Test func headSplitsAtTheFirstColon() {
        #expect(ParameterText.head("reverb:preset=hall,wet=3") == ("reverb", "preset=hall,wet=3"))
        #expect(ParameterText.head(" large-hall :40") == ("large-hall", "40"))
        #expect(ParameterText.head("eq") == ("eq", nil))
        #expect(ParameterText.head("") == ("", nil))
        #expect(ParameterText.head("a:") == ("a", ""))
    }

    @Test func entriesSplitFieldsAndKeepOrOmitEmptyOnes() {
        #expect(ParameterText.entries(" 31 : +3 ,1k:-1", separator: ":") == [
            .init(text: "31 : +3", fields: ["31", "+3"]), .init(text: "1k:-1", fields: ["1k", "-1"]),
        ])
        #expect(ParameterText.entries("a=1,,b=2", separator: "=").map(\.text) == ["a=1", "", "b=2"])
        #expect(ParameterText.entries("a=1,,b=2,", separator: "=", omittingEmpty: true).map(\.text) == ["a=1", "b=2"])
        #expect(ParameterText.entries("a=b=c", separator: "=", maxSplits: 1)[0].fields == ["a", "b=c"])
        #expect(ParameterText.entries("1:2:3", separator: ":")[0].fields == ["1", "2", "3"])
        #expect(ParameterText.entries("a=", separator: "=")[0].fields == ["a", ""])
    }

    @Test func numbersTakeASignAndAUnit() {
        #expect(ParameterText.number("+3") == 3)
        #expect(ParameterText.number(" -2.5dB ", unit: "dB") == -2.5)
        #expect(ParameterText.number("-2.5db", unit: "dB") == -2.5)
        #expect(ParameterText.number("40%", unit: "%") == 40)
        #expect(ParameterText.number("40%") == nil)
        #expect(ParameterText.number("loud") == nil)
        #expect(ParameterText.number("inf") == nil)
        #expect(ParameterText.number("") == nil)
    }

    @Test func namesCompareIgnoringCaseDashesUnderscoresAndSpaces() {
        #expect(ParameterText.nameKey("medium-hall-2") == ParameterText.nameKey("mediumHall2"))
        #expect(ParameterText.nameKey("Bass Boost") == ParameterText.nameKey("bass_boost"))
        #expect(ParameterText.nameKey("low-shelf") != ParameterText.nameKey("high-shelf"))
    }

    /// The equaliser's spec and presets read through it as before.
    @Test func equaliserSpecsReadThroughIt() throws {
        let bands = try EQBand.parse(spec: " 31:+3, 1kHz:-1.5dB ,16k : 4 ")
        #expect(bands.map(\.frequency) == [31, 1000, 16000])
        #expect(bands.map(\.gain) == [3, -1.5, 4])
        #expect(throws: EQSpecError.malformedToken("31:1:2")) { try EQBand.parse(spec: "31:1:2") }
        #expect(throws: EQSpecError.emptyToken(spec: "31:1,")) { try EQBand.parse(spec: "31:1,") }
        #expect(try EQPreset.named("Bass Boost") == EQPreset.named("bass-boost"))
    }
}
