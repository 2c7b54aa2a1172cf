// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: the MPD protocol's text layer (TonearmMPDProtocol). The input is what a
// client sends, split into lines: each goes through the framer (command lists, idle, lines that
// close the connection), each line to carry out through the tokenizer, and every request's
// arguments through the filter parser (as `find` and as `search`) and each argument reader.
// Two properties are checked, not just the absence of crashes: a request written back with
// quoted arguments reads as the same request, and a filter written back as an expression reads
// as the same filter.
import TonearmMPDProtocol

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeBufferPointer(start: data, count: size)
    var framer = MPDRequestFramer(maxCommandListBytes: 4096)
    for line in input.split(separator: 10, omittingEmptySubsequences: false) {
        let output = framer.receive(line: line)
        guard case .execute(let batch) = output else {
            if case .close = output { return 0 }
            // Let idle happen now and then: the input's own bytes decide.
            if line.count > 1, line[line.startIndex] == UInt8(ascii: "i") { framer.enterIdle() }
            continue
        }
        for l in batch.lines {
            guard let request = try? MPDRequest(line: l) else { continue }
            _ = try? MPDCommands.check(request)
            let written = ([request.command] + request.arguments.map(MPDRequest.quoted)).joined(separator: " ")
            precondition((try? MPDRequest(line: Array(written.utf8))) == request, "a request did not read back: \(written)")
            for exact in [true, false] {
                if let filter = try? MPDFilter.parse(arguments: request.arguments, exact: exact) {
                    let again = try? MPDFilter.parse(arguments: [filter.expression])
                    precondition(again == filter, "a filter did not read back: \(filter.expression)")
                }
            }
            for a in request.arguments {
                _ = try? MPDArguments.range(a)
                _ = try? MPDArguments.unsigned(a, max: 100)
                _ = try? MPDArguments.integer(a)
                _ = try? MPDArguments.bool(a)
                _ = try? MPDArguments.float(a)
                _ = try? MPDArguments.position(a)
            }
        }
    }
    return 0
}
