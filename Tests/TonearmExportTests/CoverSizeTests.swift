// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
@testable import TonearmExport
import TonearmTestSupport

/// The cover's pixel size, read to label the picture stream of an exported file: bytes that
/// only start like a PNG (an APE cover of noise after the signature) stated a width past
/// `Int32`, and exporting trapped.
@Suite(.offThePool) struct CoverSizeTests {
    @Test func aPNGSizePastInt32IsNoSize() throws {
        let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        let huge = signature + [0, 0, 0, 13] + Array("IHDR".utf8) + [0xFF, 0xFB, 0x90, 0x64, 0x80, 0, 0, 1] + [0, 0, 0, 0]
        #expect(MuxerOutput.imageSize(huge) == nil)
        let dir = try TempDir("cover-size")
        defer { dir.remove() }
        let png = try TagFixtures.coverPNG(dir.file("red.png"))
        let size = try #require(MuxerOutput.imageSize(png))
        #expect(size.width == 16 && size.height == 16)
    }
}
