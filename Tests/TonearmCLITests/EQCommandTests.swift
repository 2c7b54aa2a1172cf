// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing
import TonearmTestSupport

/// `tonearm eq list` and `tonearm eq show`.
@Suite struct EQCommandTests {
    @Test func listIncludesRockWithItsGains() throws {
        let r = try run(try tonearmBinary(), ["eq", "list"])
        #expect(r.status == 0, "stderr: \(r.stderr)")
        let rock = try #require(r.stdout.split(separator: "\n").first { $0.hasPrefix("rock ") })
        let fields = rock.split(separator: " ").map(String.init)
        #expect(fields == ["rock", "+5", "+4", "+3", "+1", "-1", "-1", "+1", "+3", "+4", "+5", "-3"])
        #expect(r.stdout.contains("flat"))
        #expect(r.stdout.contains("bass-boost"))
    }

    @Test func showPrintsTheBandGainAtItsCentre() throws {
        let r = try run(try tonearmBinary(), ["eq", "show", "1k:+6"])
        #expect(r.status == 0, "stderr: \(r.stderr)")
        let rows = r.stdout.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        let at1k = try #require(rows.first { $0.count == 4 && $0[0] == "1k" && $0[1] == "Hz" })
        let gain = try #require(Double(at1k[2]))
        #expect(abs(gain - 6) < 0.05, "response at 1 kHz: \(at1k)")
        // Far from the band the response is flat.
        let at31 = try #require(rows.first { $0.count == 4 && $0[0] == "31.5" })
        #expect(abs(try #require(Double(at31[2]))) < 0.1)
    }

    @Test func plotWritesAnSVGWithCurves() throws {
        let dir = try TempDir("eq-plot")
        let svg = dir.file("rock.svg")
        let r = try run(try tonearmBinary(), ["eq", "show", "rock", "--plot", svg])
        #expect(r.status == 0, "stderr: \(r.stderr)")
        let data = try Data(contentsOf: URL(fileURLWithPath: svg))
        let collector = SVGCollector()
        let parser = XMLParser(data: data)
        parser.delegate = collector
        #expect(parser.parse(), "not well-formed XML: \(String(describing: parser.parserError))")
        #expect(collector.rootName == "svg")
        // One faint path per non-flat band (rock: 10) plus the combined curve.
        #expect(collector.paths.count == 11)
        let total = try #require(collector.paths.last)
        let points = total.split(separator: " ").filter { $0.hasPrefix("M") || $0.hasPrefix("L") }
        #expect(points.count > 100)
        #expect(collector.texts.contains("1k"))
    }

    @Test func aBadSpecIsAClearError() throws {
        let r = try run(try tonearmBinary(), ["eq", "show", "1k:+x"])
        #expect(r.status != 0)
        #expect(r.stderr.contains("1k:+x"))
        #expect(r.stderr.contains("gain"))
        let unknown = try run(try tonearmBinary(), ["eq", "show", "no-such-preset"])
        #expect(unknown.status != 0)
        #expect(unknown.stderr.contains("unknown EQ preset"))
        #expect(unknown.stderr.contains("rock"))
    }
}

/// Collects the root element, the `d` of every `path` and the text of the SVG.
private final class SVGCollector: NSObject, XMLParserDelegate {
    var rootName: String?
    var paths: [String] = []
    var texts: [String] = []

    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]) {
        if rootName == nil { rootName = elementName }
        if elementName == "path", let d = attributeDict["d"] { paths.append(d) }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        let t = string.trimmingCharacters(in: .whitespacesAndNewlines)
        if !t.isEmpty { texts.append(t) }
    }
}
