// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: the request head a listener of the daemon's HTTP stream output sends
// (HTTPStreamRequest.parse): any bytes, never a crash; a head that parses keeps its method.
import TonearmMPDProtocol

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let r = HTTPStreamRequest.parse(bytes) {
        precondition(!r.method.isEmpty, "a parsed request has a method")
    }
    return 0
}
