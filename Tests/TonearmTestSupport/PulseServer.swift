// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// A private, headless PulseAudio server for tests: its own folder (socket, runtime, state and
/// config all inside), a float32 48 kHz stereo null sink `test_null` as the default sink, and
/// `module-role-cork` (phone streams cork music and video streams). It never touches the user's
/// own server: pass ``serverString`` (or ``environment``) to every client.
///
/// Thread-safety: one test uses one server; `stop()` is idempotent.
public final class PrivatePulseServer: @unchecked Sendable {
    /// The server's private folder.
    public let directory: String
    /// The native-protocol address, `unix:DIR/native`.
    public let serverString: String
    /// Environment for clients (pactl, parecord, paplay): everything points into ``directory``.
    public let environment: [String: String]
    /// The name of the null sink.
    public let sinkName = "test_null"
    private let server: ChildProcess
    private let lock = NSLock()
    private var stopped = false

    /// Starts the server and waits (up to `timeout` seconds) until `pactl info` answers.
    public init(timeout: Double = 10) throws {
        let dir = try TempDir("tonearm-pulse")
        directory = dir.path
        serverString = "unix:\(dir.path)/native"
        let fm = FileManager.default
        for sub in ["run", "config", "state"] {
            try fm.createDirectory(atPath: "\(dir.path)/\(sub)", withIntermediateDirectories: true,
                                   attributes: [.posixPermissions: 0o700])
        }
        environment = [
            "XDG_RUNTIME_DIR": "\(dir.path)/run",
            "XDG_CONFIG_HOME": "\(dir.path)/config",
            "PULSE_RUNTIME_PATH": "\(dir.path)/run",
            "PULSE_STATE_PATH": "\(dir.path)/state",
            "PULSE_SERVER": "unix:\(dir.path)/native",
            "HOME": dir.path,
        ]
        let config = """
        load-module module-native-protocol-unix auth-anonymous=1 socket=\(dir.path)/native
        load-module module-null-sink sink_name=test_null format=float32le rate=48000 channels=2 sink_properties=device.description=TestNull
        set-default-sink test_null
        load-module module-role-cork trigger_roles=phone cork_roles=music,video

        """
        try config.write(toFile: "\(dir.path)/test.pa", atomically: true, encoding: .utf8)

        server = try ChildProcess(["pulseaudio", "-n", "-F", "\(dir.path)/test.pa", "--daemonize=no", "--system=false",
                         "--exit-idle-time=-1", "--disallow-exit", "--use-pid-file=no", "--realtime=false",
                         "--high-priority=false", "--log-target=file:\(dir.path)/pulse.log"], environment: environment)

        // Readiness probe: poll `pactl info` with small waits, bounded by the deadline.
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if !isRunning {
                let log = (try? String(contentsOfFile: "\(dir.path)/pulse.log", encoding: .utf8)) ?? ""
                dir.remove()
                throw TestSupportError("pulseaudio exited at start: \(log.suffix(2000))")
            }
            if let r = try? run("pactl", ["info"], environment: environment), r.status == 0 { break }
            if Date() > deadline {
                stop()
                throw TestSupportError("the private pulseaudio did not answer within \(timeout) s")
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
    }

    deinit { stop() }

    /// The server's process id.
    public var pid: pid_t { server.pid }

    /// Whether the server process still runs.
    public var isRunning: Bool { server.isRunning }

    /// Stops the server (SIGTERM; SIGKILL after 5 s), waits for it, and removes its folder.
    public func stop() {
        lock.lock()
        let already = stopped
        stopped = true
        lock.unlock()
        if already { return }
        server.terminate(SIGTERM)
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Runs `pactl` against this server.
    @discardableResult
    public func pactl(_ arguments: String...) throws -> RunResult {
        try run("pactl", arguments, environment: environment)
    }

    /// Number of playback streams (sink inputs) connected now.
    public func sinkInputCount() throws -> Int {
        try pactl("list", "short", "sink-inputs").stdout.split(separator: "\n").count
    }

    /// Number of recording streams (source outputs) connected now.
    public func sourceOutputCount() throws -> Int {
        try pactl("list", "short", "source-outputs").stdout.split(separator: "\n").count
    }

    /// The index of the module that created `test_null`.
    public func nullSinkModuleIndex() throws -> String? {
        for line in try pactl("list", "short", "modules").stdout.split(separator: "\n") {
            let cols = line.split(separator: "\t")
            if cols.count >= 3, cols[1] == "module-null-sink", cols[2].contains("sink_name=\(sinkName)") {
                return String(cols[0])
            }
        }
        return nil
    }

    /// Starts recording the null sink's monitor to a 16-bit 48 kHz stereo WAV at `path`, and
    /// waits until the recording stream is connected.
    public func startRecording(to path: String, timeout: Double = 5) throws -> Recording {
        let before = try sourceOutputCount()
        let p = try ChildProcess(["parecord", "-d", "\(sinkName).monitor", "--latency-msec=20", "--format=s16le",
                                  "--rate=48000", "--channels=2", "--file-format=wav", path], environment: environment)
        let deadline = Date().addingTimeInterval(timeout)
        while try sourceOutputCount() <= before {
            if !p.isRunning { throw TestSupportError("parecord exited at start") }
            if Date() > deadline {
                p.terminate(SIGINT)
                throw TestSupportError("parecord did not connect within \(timeout) s")
            }
            Thread.sleep(forTimeInterval: 0.01)
        }
        // A null sink that went running without a low-latency client renders up to 2 s ahead in
        // one block, and new streams then wait for that block to elapse. parecord asks for 20 ms;
        // wait until the sink runs with small blocks, so what is played next is heard at once.
        try waitForSinkLatency(below: 0.1, timeout: max(timeout, 5))
        return Recording(process: p, path: path)
    }

    /// The latency `test_null` reports now, in seconds (how far ahead it has rendered).
    public func sinkLatency() throws -> Double? {
        var inSink = false
        for line in try pactl("list", "sinks").stdout.split(separator: "\n") {
            let t = line.trimmingCharacters(in: .whitespaces)
            if t.hasPrefix("Name:") { inSink = t == "Name: \(sinkName)" }
            if inSink, t.hasPrefix("Latency:"), let v = t.dropFirst("Latency:".count).split(separator: " ").first,
               let usec = Double(v) {
                return usec / 1e6
            }
        }
        return nil
    }

    /// Waits (polling, bounded by `timeout`) until `test_null` reports less than `seconds` of latency.
    public func waitForSinkLatency(below seconds: Double, timeout: Double = 5) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let l = try sinkLatency(), l < seconds { return }
            if Date() > deadline { throw TestSupportError("the null sink still renders far ahead after \(timeout) s") }
            Thread.sleep(forTimeInterval: 0.02)
        }
    }

    /// Plays a WAV file with `paplay` and the given `media.role`, in the background.
    public func startPaplay(_ file: String, role: String) throws -> ChildProcess {
        try ChildProcess(["paplay", "--property=media.role=\(role)", file], environment: environment)
    }

    /// A running `parecord` of the monitor.
    public final class Recording: @unchecked Sendable {
        private let process: ChildProcess
        /// The WAV being written.
        public let path: String
        init(process: ChildProcess, path: String) {
            self.process = process
            self.path = path
        }
        /// Stops the recording (SIGINT, so parecord completes the file) and waits for it.
        public func stop() {
            process.terminate(SIGINT)
        }
        deinit { stop() }
    }
}

/// A child process started with `posix_spawnp`, for programs that Foundation's `Process` cannot
/// manage here: it starts children with the calling thread's signal mask (a dispatch thread blocks
/// SIGINT and SIGTERM, so `parecord` never sees its SIGINT), and it takes pulseaudio's closing of
/// inherited descriptors for an exit and then blocks in `waitpid` for ever. Children start with
/// an empty signal mask, default signal actions and standard streams on /dev/null.
///
/// Thread-safety: all members may be used from any thread.
public final class ChildProcess: @unchecked Sendable {
    public let pid: pid_t
    private let lock = NSLock()
    private var exitStatus: Int32?

    /// Starts `arguments[0]` (looked up in PATH) with this process's environment plus `environment`.
    public init(_ arguments: [String], environment: [String: String] = [:]) throws {
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd in Int32(0)...2 {
            posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
        }
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attr, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for s in [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD] { sigaddset(&defaults, s) }
        posix_spawnattr_setsigdefault(&attr, &defaults)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for p in argv { free(p) }
            for p in envp { free(p) }
        }
        var child: pid_t = 0
        let rc = posix_spawnp(&child, arguments[0], &actions, &attr, argv, envp)
        guard rc == 0 else { throw TestSupportError("cannot start \(arguments[0]): \(String(cString: strerror(rc)))") }
        pid = child
    }

    deinit { terminate(SIGKILL) }

    /// Whether the child still runs (reaps it when it has ended).
    public var isRunning: Bool {
        lock.lock()
        defer { lock.unlock() }
        return poll(block: false)
    }

    /// The exit status (as from `waitpid`) once the child has ended.
    public var status: Int32? {
        lock.lock()
        defer { lock.unlock() }
        _ = poll(block: false)
        return exitStatus
    }

    /// Whether it ended with exit code 0.
    public var succeeded: Bool { status.map { $0 & 0x7f == 0 && ($0 >> 8) & 0xff == 0 } ?? false }

    private func poll(block: Bool) -> Bool {
        if exitStatus != nil { return false }
        var st: Int32 = 0
        let r = waitpid(pid, &st, block ? 0 : WNOHANG)
        if r == pid { exitStatus = st } else if r < 0 && errno == ECHILD { exitStatus = -1 }
        return exitStatus == nil
    }

    /// Waits up to `timeout` seconds for the child to end by itself; returns whether it ended.
    @discardableResult
    public func wait(timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while isRunning {
            if Date() > deadline { return false }
            Thread.sleep(forTimeInterval: 0.005)
        }
        return true
    }

    /// Sends `signal`, waits up to 5 s for the child to end, then kills it. Idempotent.
    public func terminate(_ signal: Int32 = SIGTERM) {
        guard isRunning else { return }
        kill(pid, signal)
        if !wait(timeout: 5) {
            kill(pid, SIGKILL)
            lock.lock()
            _ = poll(block: true)
            lock.unlock()
        }
    }
}
