// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: HTTP/1.1 responses as the client reads them (status line, headers, redirects,
// Content-Length / chunked / until-close framing, Content-Range), from a channel that answers
// with the input, in pieces whose size the first byte chooses.
import Foundation
import TonearmCore
import TonearmNetwork

final class FuzzChannel: ByteChannel, @unchecked Sendable {
    let bytes: [UInt8]
    let piece: Int
    var offset = 0
    init(_ bytes: [UInt8], piece: Int) { self.bytes = bytes; self.piece = piece }
    func read(into buffer: UnsafeMutableRawBufferPointer, timeout: Double) throws(NetworkFailure) -> Int {
        let n = min(buffer.count, piece, bytes.count - offset)
        guard n > 0 else { return 0 }
        bytes.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + offset, byteCount: n) }
        offset += n
        return n
    }
    func write(_ bytes: [UInt8], timeout: Double) throws(NetworkFailure) {}
    func cancel() {}
    func close() {}
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 1 else { return 0 }
    let piece = Int(data[0]) * 16 + 1
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    // Each connection (the first, and one per redirect) answers with the same bytes.
    let connector: HTTPClient.Connector = { _, _, _, _ in FuzzChannel(bytes, piece: piece) }
    var limits = NetworkLimits()
    limits.maxHeaderBytes = 4096
    guard let response = try? HTTPClient.get(URL(string: "http://example.com/stream")!, limits: limits, connector: connector) else { return 0 }
    _ = (response.contentLength, response.contentRange, response.header("icy-metaint"))
    var out = [UInt8](repeating: 0, count: 4096)
    var total = 0
    while total < 1 << 20 {
        guard let n = try? out.withUnsafeMutableBytes({ raw throws(NetworkFailure) in try response.read(into: raw) }), n > 0 else { break }
        total += n
    }
    return 0
}
