// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmMPDClient

/// Starts `tonearm daemon` for ``MusicPlayer/system`` when none answers at its socket, as iOS's
/// system music player is always there: `tonearm daemon --detach` (which returns once the daemon
/// listens, and leaves it in a session of its own), with this process's environment, so that
/// it reads the user's config file and listens where this process looks.
///
/// The executable is `$TONEARM_EXECUTABLE` when set (empty: never start one), else `tonearm`
/// on `PATH`.
enum SystemDaemonStart {
    /// The `tonearm` to start, or why there is none.
    static func executable(environment: [String: String] = ProcessInfo.processInfo.environment) -> Result<String, StartFailure> {
        if let given = environment["TONEARM_EXECUTABLE"] {
            guard !given.isEmpty else { return .failure(StartFailure("TONEARM_EXECUTABLE is empty: not starting one")) }
            guard FileManager.default.isExecutableFile(atPath: given) else {
                return .failure(StartFailure("TONEARM_EXECUTABLE=\(given) is not an executable file"))
            }
            return .success(given)
        }
        for dir in (environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":") where !dir.isEmpty {
            let candidate = "\(dir)/tonearm"
            if FileManager.default.isExecutableFile(atPath: candidate) { return .success(candidate) }
        }
        return .failure(StartFailure("`tonearm` is not on PATH to start one"))
    }

    struct StartFailure: Error, Sendable {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }

    /// Runs `tonearm daemon --detach` and waits for it (at most `timeout` seconds; it returns
    /// once the daemon listens, or fails saying why). A daemon that another process started
    /// meanwhile counts as started (its "already running" answer).
    /// - Throws: ``StartFailure`` with the command's own words when it fails.
    static func start(timeout: Double = 30) async throws(StartFailure) {
        let path: String
        switch executable() {
        case .success(let p): path = p
        case .failure(let f): throw f
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["daemon", "--detach"]
        let errors = Pipe()
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        let (ended, endedContinuation) = AsyncStream<Int32>.makeStream()
        process.terminationHandler = { p in
            endedContinuation.yield(p.terminationStatus)
            endedContinuation.finish()
        }
        do { try process.run() } catch { throw StartFailure("\(path) daemon --detach did not start: \(error)") }
        let status = await withTaskGroup(of: Int32?.self) { group in
            group.addTask {
                for await s in ended { return s }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(timeout))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        guard let status else {
            process.terminate()
            throw StartFailure("\(path) daemon --detach did not return within \(Int(timeout)) s")
        }
        let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        // Another process started one first: it says where (and exits 1); connecting will tell.
        if status == 0 || said.contains("already running") { return }
        throw StartFailure("\(path) daemon --detach failed (status \(status))" + (said.isEmpty ? "" : ": \(said)"))
    }
}
