// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: the tag and header readers that run without FFmpeg: FLACHeader (STREAMINFO,
// Vorbis comments, pictures; the comments as stored, for readcomments), the APE tag (and where it starts, which ends an MP3's audio),
// ID3v1, ID3v2 skipping and the tag text decoder.
// Their types are internal to TonearmCodecs, which scripts/fuzz builds with testing enabled.
@testable import TonearmCodecs

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    // All of the file in memory: no descriptor is ever read.
    let file = TagFileReader(fd: -1, size: size, owned: false, head: bytes)
    if let flac = FLACHeader(file) {
        _ = flac.sourceFormat(fileSize: size)
    }
    _ = FLACHeader.storedComments(file)
    let memory = TagMemorySource(bytes: bytes)
    _ = APETag.read(memory)
    _ = APETag.start(in: memory)
    _ = ContainerSniffer.audioEnd(head: Array(bytes.prefix(4096)), file: memory)
    _ = ID3v1Tag.read(memory)
    _ = ID3v2Skip.end(of: memory)
    _ = TagText.decode(bytes)
    return 0
}
