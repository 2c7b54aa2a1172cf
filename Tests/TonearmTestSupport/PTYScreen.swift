// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// A command in a real pseudo-terminal (util-linux `script`): what it draws, the keys sent to it,
/// its exit. Every wait is for output or for the exit, each with a deadline; none is a fixed sleep.
/// The command runs with `TERM=xterm-256color`, no sound server (`PULSE_SERVER` pointing
/// nowhere) and, unless `sessionBus` is true, no session bus; a command sets its own in front
/// (`PULSE_SERVER=… tonearm …`) to use one.
///
/// `@unchecked Sendable`: `text`, `ended` and `exited` are guarded by `lock`; the rest is
/// immutable after `init`.
public final class PTYScreen: @unchecked Sendable {
    public let process = Process()
    private let input = Pipe(), output = Pipe()
    private let lock = NSCondition()
    private var text = ""
    /// The terminal's output reached its end: everything the command wrote has been read.
    private var ended = false
    private var exited = false

    public init(_ command: String, sessionBus: Bool = false) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qfec", command, "/dev/null"]
        var env = ProcessInfo.processInfo.environment
        env["TERM"] = "xterm-256color"
        env["PULSE_SERVER"] = "unix:/nonexistent"
        if !sessionBus { env["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent" }
        process.environment = env
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        output.fileHandleForReading.readabilityHandler = { [weak self] h in
            guard let self else { return }
            let d = h.availableData
            self.lock.lock()
            if d.isEmpty { self.ended = true } else { self.text += String(decoding: d, as: UTF8.self) }
            self.lock.broadcast()
            self.lock.unlock()
        }
        process.terminationHandler = { [weak self] _ in
            guard let self else { return }
            self.lock.lock()
            self.exited = true
            self.lock.broadcast()
            self.lock.unlock()
        }
        try process.run()
    }

    /// The command ends (SIGHUP from its closed terminal) if a test did not wait for it.
    deinit {
        if process.isRunning { process.terminate() }
    }

    /// Waits until `ready` holds for the output, or throws when the output ends first or after
    /// `timeout` seconds.
    public func wait(for what: String, timeout: Double = 20, until ready: (String) -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        lock.lock()
        defer { lock.unlock() }
        while !ready(text) {
            if ended { throw TestSupportError("output ended before \(what):\n\(text.suffix(1500))") }
            if !lock.wait(until: deadline) { throw TestSupportError("no \(what) in \(timeout) s:\n\(text.suffix(1500))") }
        }
    }

    /// Waits until the output contains `marker` at least `count` times.
    public func waitFor(_ marker: String, count: Int = 1, timeout: Double = 20) throws {
        try wait(for: "'\(marker)'", timeout: timeout) { $0.components(separatedBy: marker).count - 1 >= count }
    }

    /// Waits for the exit (terminating the command after `timeout` seconds); its status.
    public func waitForExit(timeout: Double = 30) throws -> Int32 {
        let deadline = Date().addingTimeInterval(timeout)
        lock.lock()
        while !exited {
            if !lock.wait(until: deadline) {
                lock.unlock()
                process.terminate()
                throw TestSupportError("still running after \(timeout) s:\n\(all.suffix(1500))")
            }
        }
        lock.unlock()
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Sends `s` to the terminal, as typed.
    public func type(_ s: String) { input.fileHandleForWriting.write(Data(s.utf8)) }

    /// Everything drawn so far.
    public var all: String { lock.lock(); defer { lock.unlock() }; return text }
}
