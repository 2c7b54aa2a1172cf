// SPDX-License-Identifier: GPL-3.0-or-later
import Glibc

/// Names the calling thread (`pthread_setname_np`), as `ps -L`, `top -H`, debuggers and
/// `/proc/PID/task/TID/comm` show it. Linux keeps at most 15 bytes: a longer name is cut (at a
/// UTF-8 character boundary) rather than refused, which the kernel does with `ERANGE` —
/// Foundation's `Thread.name` of a longer name leaves the thread with the name it inherited
/// (a dispatch worker's `com.apple.root.…`).
///
/// Thread-safety: names only the calling thread; call it first thing on a thread you own.
package func nameCurrentThread(_ name: String) {
    var bytes = Array(name.utf8.prefix(15))
    // Do not end inside a multi-byte character.
    while let last = bytes.last, last & 0xC0 == 0x80 || last >= 0xC0 {
        let start = bytes.lastIndex { $0 & 0xC0 != 0x80 } ?? 0
        let need = bytes[start] >= 0xF0 ? 4 : bytes[start] >= 0xE0 ? 3 : bytes[start] >= 0xC0 ? 2 : 1
        if bytes.count - start == need { break }
        bytes.removeSubrange(start...)
    }
    bytes.append(0)
    guard let setName = pthreadSetName else { return }
    bytes.withUnsafeBufferPointer { b in
        b.withMemoryRebound(to: CChar.self) { _ = setName(pthread_self(), $0.baseAddress!) }
    }
}

/// `pthread_setname_np` (glibc declares it only under `_GNU_SOURCE`, which the Glibc module
/// is not built with), looked up once.
private let pthreadSetName: (@convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32)? = {
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pthread_setname_np") else { return nil }
    return unsafeBitCast(symbol, to: (@convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32).self)
}()
