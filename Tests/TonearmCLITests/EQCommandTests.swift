// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing
import TonearmTestSupport

/// `tonearm eq list` and `tonearm eq show`.
@Suite(.offThePool) struct EQCommandTests {
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

    /// A plot that cannot be written fails `eq show` before it prints anything.
    @Test func aPlotInAMissingFolderFailsBeforeTheTable() throws {
        let r = try run(try tonearmBinary(), ["eq", "show", "rock", "--plot", "/missing/dir/x.svg"])
        #expect(r.status == 1)
        #expect(r.stdout.isEmpty, "printed before failing: \(r.stdout)")
        #expect(r.stderr.contains("/missing/dir/x.svg: cannot be written (the folder /missing/dir does not exist)"), "\(r.stderr)")
        let png = try run(try tonearmBinary(), ["eq", "show", "rock", "--plot", "/missing/dir/x.png"])
        #expect(png.status == 1 && png.stdout.isEmpty)
        let other = try run(try tonearmBinary(), ["eq", "show", "rock", "--plot", "x.gif"])
        #expect(other.status != 0)
        #expect(other.stderr.contains("--plot: the output must be a .svg or .png file, not 'x.gif'"), "\(other.stderr)")
    }

    /// `--plot x.png` writes a real PNG of the plot's size: every chunk's CRC, the zlib stream
    /// and its Adler-32 are checked by Python's zlib, the rows are unfiltered RGB, the combined
    /// curve's colour is drawn, and FFmpeg decodes it too.
    @Test func plotWritesAPNG() throws {
        let dir = try TempDir("eq-png")
        let png = dir.file("rock.png")
        let r = try run(try tonearmBinary(), ["eq", "show", "rock", "--plot", png])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.hasSuffix("Wrote \(png)\n"))
        let check = """
            import sys, struct, zlib
            d = open(sys.argv[1], 'rb').read()
            assert d[:8] == b'\\x89PNG\\r\\n\\x1a\\n', 'signature'
            i, idat, size = 8, b'', None
            while i < len(d):
                n, = struct.unpack('>I', d[i:i+4]); t = d[i+4:i+8]; body = d[i+8:i+8+n]
                crc, = struct.unpack('>I', d[i+8+n:i+12+n])
                assert zlib.crc32(t + body) == crc, 'crc of ' + t.decode()
                if t == b'IHDR': size = struct.unpack('>IIBBBBB', body)
                if t == b'IDAT': idat += body
                i += 12 + n
            w, h, depth, colour = size[:4]
            raw = zlib.decompress(idat)
            assert len(raw) == (w * 3 + 1) * h, 'data size'
            red = sum(1 for y in range(h) for x in range(w) if raw[y*(w*3+1)+1+x*3:y*(w*3+1)+4+x*3] == bytes([0xc0, 0x39, 0x2b]))
            print(w, h, depth, colour, red)
            """
        let py = try run("python3", ["-c", check, png])
        #expect(py.status == 0, "\(py.stderr)")
        let f = py.stdout.split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        #expect(f.count == 5 && Array(f.prefix(4)) == [860, 440, 8, 2], "\(py.stdout)")
        #expect((f.last ?? 0) > 1000, "the combined curve is drawn: \(py.stdout)")
        let probe = try run("ffprobe", ["-v", "error", "-show_entries", "stream=codec_name,width,height", "-of", "csv=p=0", png])
        #expect(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "png,860,440", "\(probe.stdout) \(probe.stderr)")
        let decode = try run("ffmpeg", ["-v", "error", "-i", png, "-f", "null", "-"])
        #expect(decode.status == 0 && decode.stderr.isEmpty, "\(decode.stderr)")
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

/// The equalizer on files below 44.1 kHz: `eq show --rate` and `render --eq` of real files.
@Suite(.offThePool) struct EQSampleRateCommandLineTests {
    /// The `frequency   response` rows of `eq show`: (Hz, dB).
    static func responseRows(_ stdout: String) -> [(Double, Double)] {
        stdout.split(separator: "\n").compactMap { line -> (Double, Double)? in
            let f = line.split(separator: " ").map(String.init)
            guard f.count == 4, f[1] == "Hz", f[3] == "dB", let db = Double(f[2]) else { return nil }
            let hz = f[0].hasSuffix("k") ? Double(f[0].dropLast()).map { $0 * 1000 } : Double(f[0])
            return hz.map { ($0, db) }
        }
    }

    @Test func showAtLowRatesKeepsThePresetShape() throws {
        let ref = Self.responseRows(try run(try tonearmBinary(), ["eq", "show", "rock"]).stdout)
        let at1kRef = try #require(ref.first { $0.0 == 1000 }).1
        for rate in ["16000", "22050", "32000", "48000"] {
            let r = try run(try tonearmBinary(), ["eq", "show", "rock", "--rate", rate])
            #expect(r.status == 0, "\(r.stderr)")
            let rows = Self.responseRows(r.stdout)
            #expect(rows.count > 20)
            let at1k = try #require(rows.first { $0.0 == 1000 }).1
            #expect(abs(at1k - at1kRef) <= 0.1, "\(rate) Hz: \(at1k) dB at 1 kHz, 44.1 kHz: \(at1kRef) dB")
            // Nowhere the broadband lift: the low mids are cut as at 44.1 kHz.
            let mids = rows.filter { (400...1250).contains($0.0) }
            #expect(mids.allSatisfy { $0.1 < 0 }, "\(rate) Hz: \(mids)")
        }
        let low = try run(try tonearmBinary(), ["eq", "show", "rock", "--rate", "22050"])
        #expect(low.stdout.contains("16k Hz 1.00 oct  +5.0 dB  (left out: not below Nyquist, 11.025k Hz)"), "\(low.stdout)")
        // A band above Nyquist changes nothing at all.
        let high = try run(try tonearmBinary(), ["eq", "show", "16000:+12", "--rate", "22050"])
        #expect(Self.responseRows(high.stdout).allSatisfy { $0.1 == 0 }, "\(high.stdout)")
    }

    /// The level change of a 1 kHz tone rendered through `--eq` at `rate`, in dB (measured on
    /// the rendered file's samples, away from the edges).
    static func renderedGain(rate: Int, eq: String, dir: TempDir) throws -> Double {
        let src = dir.file("tone-\(rate).wav"), out = dir.file("eq-\(rate)-\(eq.filter(\.isLetter)).wav")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "aevalsrc=exprs=0.25*sin(2*PI*1000*t):s=\(rate):d=1", "-c:a", "pcm_f32le", "-y", src])
        let r = try run(try tonearmBinary(), ["render", src, "-o", out, "--eq", eq, "--force"])
        guard r.status == 0 else { throw TestSupportError("render failed: \(r.stderr)") }
        let w = try readWAV(out)
        let body = w.channels[0][(rate / 5)..<(rate * 4 / 5)]
        return 20 * log10(Double(rms(body)) / (0.25 / 2.0.squareRoot()))
    }

    @Test func renderOfA22kHzToneIsShapedAsAt44kHz() throws {
        let dir = try TempDir("eq-rates")
        let at44 = try Self.renderedGain(rate: 44_100, eq: "rock", dir: dir)
        let at22 = try Self.renderedGain(rate: 22_050, eq: "rock", dir: dir)
        #expect(abs(at44 + 3.74) < 0.2, "44.1 kHz: \(at44) dB")
        #expect(abs(at22 - at44) < 0.2, "22.05 kHz: \(at22) dB, 44.1 kHz: \(at44) dB")
        let above = try Self.renderedGain(rate: 22_050, eq: "16000:+12", dir: dir)
        #expect(abs(above) < 0.05, "a 16 kHz band on a 22.05 kHz file: \(above) dB at 1 kHz")
    }
}
