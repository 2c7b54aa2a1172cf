// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: the MPD client's reading of a server's answers (MPDResponseParser in
// TonearmMPDProtocol, what `tonearm remote` and SystemMusicPlayer read the daemon with). The
// first byte chooses the size of the pieces the rest is fed in (answers arrive split anywhere)
// and whether a greeting comes first; then every answer is read until the bytes run out or the
// parser refuses them. Checked besides crashes: an answer written back (pairs, list_OK where
// they fell, the binary chunk, OK or the ACK line) reads as the same answer, fed whole.
import TonearmMPDProtocol

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let control = data[0]
    let input = UnsafeBufferPointer(start: data + 1, count: size - 1)
    let step = Int(control & 0x3F) + 1
    var parser = MPDResponseParser(maxLineBytes: 4096, maxBinaryBytes: 8192)
    var greeted = control & 0x40 == 0
    var offset = 0
    do {
        while offset < input.count {
            parser.feed(input[offset..<min(input.count, offset + step)])
            offset += step
            if !greeted {
                guard try parser.readGreeting() != nil else { continue }
                greeted = true
            }
            while let answer = try parser.nextAnswer() { check(answer) }
        }
    } catch {
        _ = error.description
    }
    return 0
}

/// The answer written as a server writes it, read again whole.
func check(_ answer: MPDResponseParser.Answer) {
    let reply: MPDReply
    let end: String
    switch answer {
    case .ok(let r): reply = r; end = "OK\n"
    case .failure(let e, let r):
        reply = r
        end = e.description + "\n"
        precondition(MPDServerError(line: e.description) == e, "an ACK did not read back: \(e)")
    }
    // A key, value or ACK message ending in CR reads back without it (CR LF is a line end): not
    // comparable.
    guard !reply.pairs.contains(where: { $0.key.hasSuffix("\r") || $0.value.hasSuffix("\r") }), !end.hasSuffix("\r\n") else { return }
    var bytes: [UInt8] = []
    var ends = reply.listEnds[...]
    for (k, p) in reply.pairs.enumerated() {
        while ends.first == k { bytes += Array("list_OK\n".utf8); ends = ends.dropFirst() }
        bytes += Array("\(p.key): \(p.value)\n".utf8)
        if p.key == "binary", let b = reply.binary { bytes += b + [10] }
    }
    for _ in ends { bytes += Array("list_OK\n".utf8) }
    bytes += Array(end.utf8)
    var again = MPDResponseParser(maxLineBytes: 1 << 20, maxBinaryBytes: 1 << 20)
    again.feed(bytes)
    let read = try? again.nextAnswer()
    precondition(read == answer, "an answer did not read back: \(answer) as \(String(describing: read))")
}
