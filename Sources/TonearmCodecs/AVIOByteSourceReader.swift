// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg
import Glibc
import TonearmCore

/// A ``ByteSource`` read by libavformat through an ``AVIOBridge`` (on the demuxer's thread). A
/// source's failure is kept in ``failure`` and reported to FFmpeg as an I/O error, so that the
/// caller can say what really went wrong.
final class AVIOByteSourceReader: AVIOByteReader {
    let source: any ByteSource
    /// The last failure of the source (set on the demuxer's thread).
    var failure: TonearmError?

    init(source: any ByteSource) { self.source = source }

    var size: Int64? { source.length }
    var position: Int64 { source.position }

    func read(into buffer: UnsafeMutablePointer<UInt8>, count: Int) -> Int32 {
        do throws(TonearmError) {
            let n = try source.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: count))
            return Int32(n)
        } catch {
            failure = error
            return tonearm_averror(EIO)
        }
    }

    func seek(to offset: Int64) -> Bool { source.seek(to: offset) }
}
