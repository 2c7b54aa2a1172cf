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
    /// The running pulseaudio (replaced by ``start(timeout:)`` after ``kill()``). Under `lock`.
    private var server: ChildProcess
    private let lock = NSLock()
    private var stopped = false

    /// Starts the server and waits (up to `timeout` seconds) until it reports ready (then checks
    /// that `pactl info` answers).
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
        load-module module-cli-protocol-unix socket=\(dir.path)/cli
        load-module module-null-sink sink_name=test_null format=float32le rate=48000 channels=2 sink_properties=device.description=TestNull
        set-default-sink test_null
        load-module module-role-cork trigger_roles=phone cork_roles=music,video

        """
        try config.write(toFile: "\(dir.path)/test.pa", atomically: true, encoding: .utf8)
        do {
            server = try Self.launch(in: dir.path, environment: environment, timeout: timeout)
        } catch {
            dir.remove()
            throw error
        }
    }

    /// Starts pulseaudio with the folder's `test.pa` and waits (up to `timeout` seconds) until it
    /// reports ready and `pactl info` answers; stops it and throws when it does not.
    private static func launch(in dir: String, environment: [String: String], timeout: Double) throws -> ChildProcess {
        // Readiness is an event: pulseaudio sends systemd's `READY=1` to $NOTIFY_SOCKET once its
        // start-up script has run, just before its main loop serves clients.
        try? FileManager.default.removeItem(atPath: "\(dir)/notify")
        let notify = try NotifySocket(path: "\(dir)/notify")
        enum Startup: Sendable { case starting, ready, exited }
        let startup = Watched(Startup.starting)
        let server: ChildProcess
        // Real-time as a desktop's server is (its sink thread SCHED_RR, the daemon at nice −11),
        // where the process may have it (root, CAP_SYS_NICE or an RLIMIT_RTPRIO); elsewhere
        // pulseaudio says so in its log and runs at normal priority. A normal-priority server's
        // sink thread was preempted under load and counted as the stream's underrun.
        do {
            server = try ChildProcess(["pulseaudio", "-n", "-F", "\(dir)/test.pa", "--daemonize=no", "--system=false",
                             "--exit-idle-time=-1", "--disallow-exit", "--use-pid-file=no", "--realtime=true",
                             "--high-priority=true", "--log-target=file:\(dir)/pulse.log"],
                                      environment: environment.merging(["NOTIFY_SOCKET": notify.path]) { $1 },
                                      onExit: { _ in startup.update { if $0 == .starting { $0 = .exited } } })
        } catch {
            notify.close()
            throw error
        }
        notify.receive(until: "READY=1", timeout: timeout) { startup.update { if $0 == .starting { $0 = .ready } } }
        _ = startup.waitBlocking(timeout: timeout) { $0 != .starting }
        switch startup.value {
        case .ready:
            let info = try? run("pactl", ["info"], environment: environment)
            guard let info, info.status == 0 else {
                server.terminate(SIGTERM)
                throw TestSupportError("the private pulseaudio was ready but `pactl info` failed: \(info?.stderr ?? "")")
            }
            return server
        case .exited:
            let log = (try? String(contentsOfFile: "\(dir)/pulse.log", encoding: .utf8)) ?? ""
            throw TestSupportError("pulseaudio exited at start: \(log.suffix(2000))")
        case .starting:
            server.terminate(SIGTERM)
            throw TestSupportError("the private pulseaudio did not report ready within \(timeout) s")
        }
    }

    /// Kills the server with SIGKILL (a crash: clients see their connection fail) and waits until
    /// it has exited. Its folder stays, so ``start(timeout:)`` brings it back at the same address.
    public func kill() {
        let s = lock.withLock { server }
        s.terminate(SIGKILL)
    }

    /// Starts the server again at the same address after ``kill()`` (a restarted sound server),
    /// and waits until it is ready.
    public func start(timeout: Double = 10) throws {
        let old = lock.withLock { server }
        precondition(!old.isRunning, "start() after kill()")
        let s = try Self.launch(in: directory, environment: environment, timeout: timeout)
        lock.withLock { server = s }
    }

    deinit { stop() }

    /// The server's process id.
    public var pid: pid_t { lock.withLock { server.pid } }

    /// Whether the server process still runs.
    public var isRunning: Bool { lock.withLock { server.isRunning } }

    /// Stops the server (SIGTERM; SIGKILL after 5 s), waits for it, and removes its folder.
    public func stop() {
        lock.lock()
        let already = stopped
        stopped = true
        lock.unlock()
        if already { return }
        lock.withLock { server }.terminate(SIGTERM)
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Runs one command of PulseAudio's command-line interface (`pacmd`'s language, e.g.
    /// `update-sink-proplist NAME key=value`, which `pactl` cannot do) through the server's CLI
    /// socket, and returns what the server answered (the server's greeting at most). Throws when the socket
    /// cannot be reached or the server reports an error.
    @discardableResult
    public func cli(_ command: String) throws -> String {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestSupportError("socket: errno \(errno)") }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let path = Array("\(directory)/cli".utf8CString)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, c) in path.prefix(raw.count - 1).enumerated() { raw[i] = UInt8(bitPattern: c) }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else { throw TestSupportError("cannot reach the CLI socket: errno \(errno)") }
        let bytes = Array((command + "\n").utf8)
        guard write(fd, bytes, bytes.count) == bytes.count else { throw TestSupportError("cannot write to the CLI socket") }
        shutdown(fd, Int32(SHUT_WR))
        var answer = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(fd, &chunk, chunk.count)
            if n <= 0 { break }
            answer += chunk[0..<n]
        }
        // The interactive prompt and the welcome text are not answers.
        let text = String(decoding: answer, as: UTF8.self)
            .replacingOccurrences(of: ">>> ", with: "")
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let meaningful = text.split(separator: "\n").filter { !$0.hasPrefix("Welcome to PulseAudio") && !$0.hasPrefix("Use \"help\"") }
        if !meaningful.isEmpty { throw TestSupportError("\(command): \(meaningful.joined(separator: "; "))") }
        return text
    }

    /// The volume percentages `pactl get-sink-volume` reports for `sink`, one per channel.
    public func volumePercents(_ sink: String) throws -> [Int] {
        let out = try pactl("get-sink-volume", sink).stdout
        let first = out.split(separator: "\n").first.map(String.init) ?? ""
        return first.split(separator: "/").compactMap { part -> Int? in
            let t = part.trimmingCharacters(in: .whitespaces)
            guard t.hasSuffix("%") else { return nil }
            return Int(t.dropLast())
        }
    }

    /// Whether `pactl get-sink-mute` says `sink` is muted.
    public func isMuted(_ sink: String) throws -> Bool {
        try pactl("get-sink-mute", sink).stdout.contains("yes")
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
        try startRecording(ofSink: sinkName, to: path, timeout: timeout)
    }

    /// Starts recording the monitor of the sink `sink` (another null sink loaded by a test) to a
    /// 16-bit 48 kHz stereo WAV at `path`, and waits until the recording stream is connected and
    /// the sink runs with small blocks. `channelMap` (PulseAudio's names, comma-separated, e.g.
    /// the sink's own map) records those channels in that order instead of stereo.
    public func startRecording(ofSink sink: String, to path: String, channelMap: String? = nil,
                               timeout: Double = 5) throws -> Recording {
        let channels = channelMap.map { ["--channels=\($0.split(separator: ",").count)", "--channel-map=\($0)"] }
            ?? ["--channels=2"]
        // `-v` makes parecord print "Stream successfully created." when its stream is ready (the
        // server has created the source output): that line is the event waited for.
        let p = try ChildProcess(["parecord", "-v", "-d", "\(sink).monitor", "--latency-msec=20", "--format=s16le",
                                  "--rate=48000"] + channels + ["--file-format=wav", path],
                                 environment: environment.merging(["LC_ALL": "C"]) { $1 }, captureStandardError: true)
        guard p.waitForStandardError(containing: "Stream successfully created.", timeout: timeout) else {
            let running = p.isRunning
            p.terminate(SIGINT)
            throw TestSupportError(running ? "parecord did not connect within \(timeout) s"
                                           : "parecord exited at start: \(p.standardErrorText.suffix(2000))")
        }
        // A null sink that went running without a low-latency client renders up to 2 s ahead in
        // one block, and new streams then wait for that block to elapse. parecord asks for 20 ms;
        // wait until the sink runs with small blocks, so what is played next is heard at once.
        try waitForSinkLatency(below: 0.1, of: sink, timeout: max(timeout, 5))
        return Recording(process: p, path: path)
    }

    /// The latency `test_null` reports now, in seconds (how far ahead it has rendered).
    public func sinkLatency() throws -> Double? {
        try sinkLatency(of: sinkName)
    }

    /// The latency the sink `sink` reports now, in seconds.
    public func sinkLatency(of sink: String) throws -> Double? {
        var inSink = false
        for line in try pactl("list", "sinks").stdout.split(separator: "\n") {
            let t = line.trimmingCharacters(in: .whitespaces)
            if t.hasPrefix("Name:") { inSink = t == "Name: \(sink)" }
            if inSink, t.hasPrefix("Latency:"), let v = t.dropFirst("Latency:".count).split(separator: " ").first,
               let usec = Double(v) {
                return usec / 1e6
            }
        }
        return nil
    }

    /// Waits (polling, bounded by `timeout`) until `test_null` reports less than `seconds` of latency.
    ///
    /// This is the one polled wait here, because nothing signals it: the latency is a live
    /// measurement (`pactl list sinks` asks the sink's thread how far ahead it has rendered), and
    /// PulseAudio publishes no subscription event when it changes (`pactl subscribe` reports
    /// objects appearing, disappearing and changing their properties, volume or state, never
    /// their latency). The null sink only shortens its blocks after the long block it already
    /// rendered has elapsed in real time, so the fall comes from the passing of time itself.
    public func waitForSinkLatency(below seconds: Double, timeout: Double = 5) throws {
        try waitForSinkLatency(below: seconds, of: sinkName, timeout: timeout)
    }

    /// ``waitForSinkLatency(below:timeout:)`` for the sink `sink`.
    public func waitForSinkLatency(below seconds: Double, of sink: String, timeout: Double = 5) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let l = try sinkLatency(of: sink), l < seconds { return }
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
/// an empty signal mask, default signal actions and standard streams on /dev/null (standard
/// error may be captured instead).
///
/// The end of the child is an event: a reaper thread per child blocks in `waitpid` and publishes
/// the status, so ``wait(timeout:)`` and ``waitForExit(timeout:)`` are woken by it (the timeout is
/// only a deadline).
///
/// Thread-safety: all members may be used from any thread.
public final class ChildProcess: @unchecked Sendable {
    public let pid: pid_t
    /// The write end of the child's standard input, when it is a lifeline (closed on deinit).
    private let lifelineFD: Int32
    /// The exit status (as from `waitpid`; -1 when another waiter reaped the child), nil while it runs.
    private let exitStatus = Watched<Int32?>(nil)
    /// Standard error so far, when captured.
    private let standardError = Watched(CapturedOutput())
    /// Standard output so far, when captured.
    private let standardOutput = Watched(CapturedOutput())

    /// Text a child wrote, whether the stream has ended (closed by the child), and whether the
    /// child has ended.
    public struct CapturedOutput: Sendable {
        public var text = ""
        public var ended = false
        public var childEnded = false
    }

    /// Adds to `actions` the closing of every descriptor from 3 up in the child, after the
    /// standard streams are set: glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and
    /// later; Swift does not import it, so it is looked up by name), or, without it, a close for
    /// each descriptor open now (a descriptor another thread opens before the spawn may then
    /// still be inherited).
    static func closeInheritedDescriptors(_ actions: inout posix_spawn_file_actions_t) {
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        if let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") {
            let closeFrom = unsafeBitCast(symbol, to: CloseFrom.self)
            if closeFrom(&actions, 3) == 0 { return }
        }
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for fd in open.compactMap(Int32.init) where fd > 2 {
            posix_spawn_file_actions_addclose(&actions, fd)
        }
    }

    /// Starts `arguments[0]` (looked up in PATH) with this process's environment plus `environment`.
    /// With `captureStandardError`, a reader thread collects the child's standard error (see
    /// ``waitForStandardError(containing:timeout:)``); `captureStandardOutput` does the same for
    /// standard output (see ``waitForStandardOutput(timeout:until:)``). `onExit` is called with the status on the
    /// reaper thread when the child ends. `onStandardOutput` (with `captureStandardOutput`) is called on the
    /// reader thread with every chunk of standard output as it is read, all of it (``standardOutputText`` keeps
    /// only the start and the end of a long output). With `lifeline`, the child's standard input is
    /// a pipe this object holds open and never writes to: the child reads end-of-file when the
    /// object goes away or this process dies, whichever comes first — a way for a helper server
    /// to end itself with the test run.
    public init(_ arguments: [String], environment: [String: String] = [:], captureStandardError: Bool = false,
                captureStandardOutput: Bool = false, onStandardOutput: (@Sendable ([UInt8]) -> Void)? = nil,
                lifeline: Bool = false, onExit: (@Sendable (Int32) -> Void)? = nil) throws {
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // Both ends close on exec (pipe2 is not imported; another thread spawning between pipe
        // and fcntl could inherit an end, which only delays the end of the capture); dup2 gives
        // the child a plain descriptor 2.
        var errPipe: [Int32] = [-1, -1]
        var outPipe: [Int32] = [-1, -1]
        for (capture, index) in [(captureStandardError, 0), (captureStandardOutput, 1)] where capture {
            var fds: [Int32] = [-1, -1]
            guard pipe(&fds) == 0 else {
                for fd in errPipe + outPipe where fd >= 0 { close(fd) }
                throw TestSupportError("cannot create a pipe: \(String(cString: strerror(errno)))")
            }
            for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            if index == 0 { errPipe = fds } else { outPipe = fds }
        }
        var inPipe: [Int32] = [-1, -1]
        if lifeline {
            guard pipe(&inPipe) == 0 else {
                for fd in errPipe + outPipe where fd >= 0 { close(fd) }
                throw TestSupportError("cannot create a pipe: \(String(cString: strerror(errno)))")
            }
            for fd in inPipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        }
        for fd in Int32(0)...2 {
            if fd == 0 && lifeline {
                posix_spawn_file_actions_adddup2(&actions, inPipe[0], 0)
            } else if fd == 2 && captureStandardError {
                posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)
            } else if fd == 1 && captureStandardOutput {
                posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
            } else {
                posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
            }
        }
        // Nothing else of this process: Foundation's `Pipe` does not set close-on-exec, so a
        // server started while another test's `run()` reads its child's output to the end held
        // that pipe's write end open for its whole life — the reader never saw the end, blocked
        // a thread of the cooperative pool, and with the pool's two threads blocked so the
        // test run hung (a CI run stopped at its 90-minute limit).
        Self.closeInheritedDescriptors(&actions)
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
        if captureStandardError { close(errPipe[1]) }
        if captureStandardOutput { close(outPipe[1]) }
        if lifeline { close(inPipe[0]) }
        lifelineFD = inPipe[1]
        guard rc == 0 else {
            if lifelineFD >= 0 { close(lifelineFD) }
            if captureStandardError { close(errPipe[0]) }
            if captureStandardOutput { close(outPipe[0]) }
            throw TestSupportError("cannot start \(arguments[0]): \(String(cString: strerror(rc)))")
        }
        pid = child

        let exitStatus = exitStatus, output = standardError, stdoutOutput = standardOutput, spawned = child
        Thread {
            var st: Int32 = 0
            var r: pid_t
            repeat { r = waitpid(spawned, &st, 0) } while r < 0 && errno == EINTR
            let status = r == spawned ? st : -1
            exitStatus.update { $0 = status }
            output.update { $0.childEnded = true }
            stdoutOutput.update { $0.childEnded = true }
            onExit?(status)
        }.start()

        let readers: [(Bool, Int32, Watched<CapturedOutput>, (@Sendable ([UInt8]) -> Void)?)] =
            [(captureStandardError, errPipe[0], output, nil), (captureStandardOutput, outPipe[0], stdoutOutput, onStandardOutput)]
        for (capture, fd, output, onChunk) in readers where capture {
            Thread {
                var buffer = [UInt8](repeating: 0, count: 4096)
                while true {
                    let n = read(fd, &buffer, buffer.count)
                    if n < 0 && errno == EINTR { continue }
                    if n <= 0 { break }
                    onChunk?(Array(buffer[0..<n]))
                    let chunk = String(decoding: buffer[0..<n], as: UTF8.self)
                    output.update { o in
                        o.text += chunk
                        // Chatty children (parecord -v reports its latency 20 times a second):
                        // keep the start, where the messages that tests wait for are, and the end.
                        if o.text.utf8.count > 65_536 { o.text = String(o.text.prefix(16_384)) + "\n…\n" + String(o.text.suffix(16_384)) }
                    }
                }
                close(fd)
                output.update { $0.ended = true }
            }.start()
        }
    }

    deinit {
        terminate(SIGKILL)
        if lifelineFD >= 0 { close(lifelineFD) }
    }

    /// Whether the child still runs.
    public var isRunning: Bool { exitStatus.value == nil }

    /// The exit status (as from `waitpid`) once the child has ended.
    public var status: Int32? { exitStatus.value }

    /// Whether it ended with exit code 0.
    public var succeeded: Bool { status.map { $0 & 0x7f == 0 && ($0 >> 8) & 0xff == 0 } ?? false }

    /// Standard error so far (empty unless captured).
    public var standardErrorText: String { standardError.value.text }

    /// Standard output so far (empty unless captured).
    public var standardOutputText: String { standardOutput.value.text }

    /// Suspends (blocking no thread) until `condition` holds for the captured standard output
    /// (true), or `timeout` seconds pass (false). Woken by each chunk the child writes and by
    /// the end of the stream or child.
    public func waitForStandardOutput(timeout: Double,
                                      until condition: @escaping @Sendable (CapturedOutput) -> Bool) async -> Bool {
        await standardOutput.wait(timeout: timeout, until: condition)
    }

    /// Blocks until `condition` holds for the captured standard output, or `timeout` seconds
    /// pass; returns the output then.
    public func waitForStandardOutputBlocking(timeout: Double,
                                              until condition: @escaping @Sendable (CapturedOutput) -> Bool) -> CapturedOutput {
        _ = standardOutput.waitBlocking(timeout: timeout, until: condition)
        return standardOutput.value
    }

    /// Blocks until the captured standard error contains `text` (true), or it or the child ends
    /// or `timeout` seconds pass without it (false). Woken by each chunk the child writes.
    public func waitForStandardError(containing text: String, timeout: Double) -> Bool {
        _ = standardError.waitBlocking(timeout: timeout) { $0.text.contains(text) || $0.ended || $0.childEnded }
        return standardError.value.text.contains(text)
    }

    /// Blocks up to `timeout` seconds (nil: no limit) for the child to end by itself; returns
    /// whether it ended. Woken by the child's end, not by polling.
    @discardableResult
    public func wait(timeout: Double?) -> Bool {
        exitStatus.waitBlocking(timeout: timeout) { $0 != nil }
    }

    /// Suspends (blocking no thread) up to `timeout` seconds for the child to end by itself;
    /// returns whether it ended.
    public func waitForExit(timeout: Double) async -> Bool {
        await exitStatus.wait(timeout: timeout) { $0 != nil }
    }

    /// Sends `signal`, waits up to 5 s for the child to end, then kills it and waits. Idempotent.
    public func terminate(_ signal: Int32 = SIGTERM) {
        guard isRunning else { return }
        kill(pid, signal)
        if !wait(timeout: 5) {
            kill(pid, SIGKILL)
            wait(timeout: nil)
        }
    }
}

/// A datagram socket for systemd's readiness protocol: a child given `NOTIFY_SOCKET=path` sends
/// `READY=1` there when it is ready (pulseaudio does, through `sd_notify`).
final class NotifySocket: @unchecked Sendable {
    let path: String
    private var fd: Int32

    init(path: String) throws {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestSupportError("cannot create a socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            Glibc.close(fd)
            throw TestSupportError("socket path too long: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
        }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard rc == 0 else {
            let reason = String(cString: strerror(errno))
            Glibc.close(fd)
            throw TestSupportError("cannot bind \(path): \(reason)")
        }
    }

    /// On a thread of its own, receives datagrams (each blocking read bounded by `timeout`
    /// seconds) until one contains `text`, then calls `onMatch`; closes the socket either way.
    func receive(until text: String, timeout: Double, onMatch: @escaping @Sendable () -> Void) {
        var limit = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        let fd = fd
        self.fd = -1
        Thread {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = recv(fd, &buffer, buffer.count, 0)
                if n < 0 && errno == EINTR { continue }
                if n < 0 { break } // the deadline passed (EAGAIN) or the socket failed
                let message = String(decoding: buffer[0..<n], as: UTF8.self)
                if message.split(separator: "\n").contains(where: { $0 == text }) {
                    onMatch()
                    break
                }
            }
            Glibc.close(fd)
        }.start()
    }

    /// Closes the socket when ``receive(until:timeout:onMatch:)`` was not called.
    func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }
}
