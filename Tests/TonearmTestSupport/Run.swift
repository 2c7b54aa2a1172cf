// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// The result of running a program to its end.
public struct RunResult: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String
}

/// Errors of the test-support helpers.
public struct TestSupportError: Error, CustomStringConvertible {
    public var description: String
    public init(_ d: String) { description = d }
}

/// Runs `executable` (a path, or a name looked up in PATH) with `arguments` and waits for it.
/// Standard output and error are collected; `environment` entries are added to this process's.
@discardableResult
public func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
                currentDirectory: String? = nil, stdin: Data? = nil) throws -> RunResult {
    let p = Process()
    if executable.contains("/") {
        p.executableURL = URL(fileURLWithPath: executable)
    } else {
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    }
    p.arguments = executable.contains("/") ? arguments : [executable] + arguments
    var env = ProcessInfo.processInfo.environment
    for (k, v) in environment { env[k] = v }
    p.environment = env
    if let d = currentDirectory { p.currentDirectoryURL = URL(fileURLWithPath: d) }
    let out = Pipe(), err = Pipe()
    p.standardOutput = out
    p.standardError = err
    let inPipe = Pipe()
    p.standardInput = inPipe
    try p.run()
    if let stdin { inPipe.fileHandleForWriting.write(stdin) }
    try? inPipe.fileHandleForWriting.close()
    // Read both pipes fully before waiting, on separate threads, so a full pipe cannot block the child.
    let errBox = DataBox()
    let t = Thread { errBox.data = err.fileHandleForReading.readDataToEndOfFile() }
    t.start()
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    while !errBox.done { errBox.wait() }
    return RunResult(status: p.terminationStatus,
                     stdout: String(decoding: outData, as: UTF8.self),
                     stderr: String(decoding: errBox.data ?? Data(), as: UTF8.self))
}

private final class DataBox: @unchecked Sendable {
    private let cond = NSCondition()
    private var _data: Data?
    private var _done = false
    var data: Data? {
        get { cond.lock(); defer { cond.unlock() }; return _data }
        set { cond.lock(); _data = newValue; _done = true; cond.broadcast(); cond.unlock() }
    }
    var done: Bool { cond.lock(); defer { cond.unlock() }; return _done }
    func wait() { cond.lock(); if !_done { cond.wait() }; cond.unlock() }
}

/// A fresh private temporary directory, removed by `remove()`.
public struct TempDir: Sendable {
    public let path: String
    public init(_ prefix: String = "tonearm-test") throws {
        let base = FileManager.default.temporaryDirectory.path
        let p = "\(base)/\(prefix)-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: p, withIntermediateDirectories: true)
        path = p
    }
    public func file(_ name: String) -> String { "\(path)/\(name)" }
    public func remove() { try? FileManager.default.removeItem(atPath: path) }
}

/// The `tonearm` binary built beside the tests.
public func tonearmBinary() throws -> String {
    var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    for _ in 0..<4 {
        let candidate = dir.appendingPathComponent("tonearm").path
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        dir = dir.deletingLastPathComponent()
    }
    let fromSource = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../.build/debug/tonearm").standardized.path
    if FileManager.default.isExecutableFile(atPath: fromSource) { return fromSource }
    throw TestSupportError("the tonearm binary was not found; build it with `swift build`")
}
