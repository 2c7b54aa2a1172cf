// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: WAVRepair's reading of a WAV file's chunks, and FLACStreamInfo's of a FLAC
// file's STREAMINFO (what the recorder runs on a file whose writing stopped short). The input is
// the file's head; its first byte also picks how much longer the file is than the head. A plan
// must stay inside the file and describe whole frames; a rewritten STREAMINFO field keeps the
// format's 28 bits and holds the count given (or 0).
import TonearmCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let head = Array(UnsafeBufferPointer(start: data, count: size))
    let extra = size > 0 ? Int(data[0]) * 97 : 0
    for fileLength in [size, size + extra, max(0, size - 3)] {
        guard let plan = WAVRepair.plan(head: head, fileLength: fileLength) else { continue }
        precondition(plan.length <= fileLength, "the plan grows the file")
        precondition(plan.dataSizeOffset >= 12 && plan.dataSizeOffset + 4 <= plan.length, "the data size outside the file")
        precondition(Int(plan.riffSize) == plan.length - 8, "the RIFF size is not the length less 8")
        let start = plan.dataSizeOffset + 4
        precondition(start + Int(plan.dataSize) + Int(plan.dataSize % 2) == plan.length, "the data chunk does not end the file")
        precondition(plan.frames >= 0, "negative frames")
        if let fact = plan.factOffset { precondition(fact + 4 <= plan.length, "the fact chunk outside the file") }
    }
    if FLACStreamInfo.hasStreamInfo(head: head) {
        precondition(head.count >= FLACStreamInfo.md5Offset + 16, "STREAMINFO found in a head too short for it")
        let field = Array(head[FLACStreamInfo.fieldOffset..<(FLACStreamInfo.fieldOffset + 8)])
        let samples = Int64(truncatingIfNeeded: head.reduce(UInt64(0)) { $0 &* 131 &+ UInt64($1) })
        let out = FLACStreamInfo.field(field, samples: samples)
        precondition(out.count == 8 && out[0..<3] == field[0..<3] && out[3] >> 4 == field[3] >> 4, "the format bits changed")
        var total: UInt64 = 0
        for b in out { total = total << 8 | UInt64(b) }
        total &= (1 << 36) - 1
        precondition(total == (samples >= 0 && samples < (1 << 36) ? UInt64(samples) : 0), "the count is not the one given")
    }
    return 0
}
