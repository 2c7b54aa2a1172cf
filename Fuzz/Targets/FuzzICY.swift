// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: ICY (Shoutcast / Icecast) metadata: the demuxer fed in pieces, and the fields
// of one block. The first byte chooses metaint, the second the piece size.
import TonearmNetwork

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    _ = ICYDemuxer.fields(Array(input))
    guard size >= 2 else { return 0 }
    var demuxer = ICYDemuxer(metaint: Int(input[0]) + 1)
    let piece = Int(input[1]) + 1
    let body = UnsafeRawBufferPointer(rebasing: input[2...])
    var audio: [UInt8] = []
    var i = 0
    while i < body.count {
        let n = min(piece, body.count - i)
        _ = demuxer.feed(UnsafeRawBufferPointer(rebasing: body[i..<(i + n)]), audio: &audio)
        i += n
    }
    return 0
}
