// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: the Swift FLAC decoder (FLACDecoder): metadata blocks, frame headers,
// subframes, residuals, CRCs, resynchronisation after damage, the end search at open, and
// seeking (SEEKTABLE and bisection). The input is the file; the last two bytes, when the file
// opens, pick seek targets. FLACDecoder is internal to TonearmCodecs, which scripts/fuzz builds
// with testing enabled.
import Glibc
@testable import TonearmCodecs

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard let file = tmpfile() else { return 0 }
    defer { fclose(file) }
    guard fwrite(data, 1, size, file) == size, fflush(file) == 0 else { return 0 }
    let fd = fileno(file)
    guard let decoder = FLACDecoder(name: "fuzz.flac", fd: fd, size: size, ownsFD: false) else { return 0 }
    let channels = decoder.info.channels
    let out = UnsafeMutablePointer<Float>.allocate(capacity: 4096 * channels)
    defer { out.deallocate() }
    var total = 0
    while let n = try? decoder.readInterleaved(into: out, count: 4096), n > 0 {
        total += n
        if total > 50_000_000 { break }
    }
    let length = decoder.length
    if length > 0 && size >= 2 {
        for k in 0..<3 {
            let pick = Int64(data[size - 1 - (k & 1)]) * Int64(k + 1)
            try? decoder.seek(to: (pick * length / 768) % (length + 1))
            _ = try? decoder.readInterleaved(into: out, count: 4096)
        }
    }
    _ = decoder.takeWarnings()
    return 0
}
