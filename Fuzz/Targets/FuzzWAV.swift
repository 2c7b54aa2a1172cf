// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: WAVRepair's reading of a WAV file's chunks (what the recorder runs on a file
// whose writing stopped short). The input is the file's head; its first byte also picks how much
// longer the file is than the head. A plan must stay inside the file and describe whole frames.
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
    return 0
}
