// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Foundation
import Synchronization
import TonearmCore
import TonearmEngine
import TonearmDSP
import TonearmOutput
import TonearmSession

/// Plays one sound file or a block of encoded audio in memory: the counterpart of
/// `AVAudioPlayer`, with the same vocabulary.
///
/// ```swift
/// let player = try AudioPlayer(contentsOf: URL(fileURLWithPath: "song.flac"))
/// player.play()
/// for await event in player.events { if case .didFinishPlaying = event { break } }
/// ```
///
/// - A playing player keeps itself alive until it finishes or is stopped, so
///   `try AudioPlayer(contentsOf: url).play()` on a temporary plays to the end (the iOS pitfall of a
///   player that falls silent because nothing retained it does not exist here).
/// - Every method may be called from any thread or task. Events are delivered on the player's
///   event thread (never the render thread), in order, to the delegate and to every `events` stream.
/// - Decoding runs on a thread of its own; the output's render thread only copies prepared audio.
/// - When the sound server goes away (restarted, updated), the player is interrupted
///   (`audioPlayerBeginInterruption`); when a server answers again the interruption ends with
///   `shouldResume` and a player that was playing plays on from its place by itself. An output
///   that cannot come back (a file output) ends playback unsuccessfully instead.
public final class AudioPlayer: Sendable {
    /// The file played, when created from a URL.
    public let url: URL?
    /// The encoded bytes played, when created from data.
    public let data: Data?
    /// The PCM format of the audio (the file's own rate and channel count, Float32).
    public let format: AudioFormat
    /// Length of the audio in seconds (one pass, loops not counted).
    public let duration: Double

    /// The player's equaliser (10 graphic bands, flat — and bit-transparent — until changed).
    /// Changes apply while playing, smoothly: `player.eq.apply(.rock)`, `player.eq.bands[3].gain = 2`.
    public let eq = AudioUnitEQ(preset: .flat)

    private let source: any PlaybackSource
    private let makeOutput: @Sendable () throws -> any AudioOutputDriver
    private let control = Mutex(Control())
    /// Held while an output is opened (built, prepared, installed or given up) and while one is
    /// closed, never with `control` held inside-out (always gate → control): at most one
    /// runtime — which renders the player's one equaliser — is built or torn down at a time, so
    /// two racing opens never configure the equaliser from two engines, and a new output never
    /// starts rendering it while the stopped one still does. Control calls do not take it.
    private let outputGate = Mutex(())
    private let broadcaster = EventBroadcaster<AudioPlayerEvent>()
    private let delegateBox = Mutex(WeakDelegate())
    private let sessionBox = Mutex(SessionBox())

    private struct SessionBox: Sendable {
        /// What ``audioSession`` was set to; `.processDefault` until it is set.
        var choice: SessionChoice = .processDefault
        /// The session whose interruptions and duck requests are followed now (nil until the
        /// first `play()` for the process default; at once for a session set explicitly).
        var followed: AudioSession?
        var tasks: [Task<Void, Never>] = []
        var duck: Float = 1
    }

    /// Which session the player belongs to.
    private enum SessionChoice: Sendable {
        /// ``AudioSession/shared``, followed from the first `play()` on (as every AVAudioPlayer
        /// belongs to `AVAudioSession.sharedInstance()`).
        case processDefault
        /// The session set (nil: none — the player opted out).
        case set(AudioSession?)
    }

    private struct WeakDelegate { weak var value: (any AudioPlayerDelegate)? }

    /// Only ever inside `control`'s mutex; the runtime and nodes it holds are used with that lock
    /// held (the runtime's own threads share nothing else with it).
    private struct Control: Sendable {
        var machine = AudioPlayerStateMachine()
        var runtime: PlayerRuntime?
        var volume: Float = 1
        var pan: Float = 0
        var numberOfLoops = 0
        var enableRate = false
        var rate: Float = 1
        var meteringEnabled = false
        var averagePower: [Float] = []
        var peakPower: [Float] = []
        /// The source frame where the current generation starts (currentTime never reads before it).
        var generationStart: AudioFramePosition = 0
        /// Why the last prepare or play failed.
        var lastFailure: TonearmError?
        var effects: [AudioNode] = []
        /// Set while playing so that a player nobody holds plays to its end.
        var keepAlive: AudioPlayer?
        /// The output being opened (outside the lock), if any.
        var opening: Opening?
        var openingToken: UInt64 = 0
        /// Watches for a lost output to answer again (from its loss until it does).
        var outputWatch: OutputReturnWatch?

        var effectiveRate: Double { enableRate ? Double(rate) : 1 }
    }

    /// Creates a player for any ``PlaybackSource`` (generators, tests).
    public init(source: any PlaybackSource, url: URL? = nil, data: Data? = nil,
                output: @escaping @Sendable () throws -> any AudioOutputDriver) {
        self.source = source
        self.url = url
        self.data = data
        self.format = source.sourceFormat
        self.duration = source.sourceFormat.duration(ofFrames: source.frameLength)
        self.makeOutput = output
        let n = source.sourceFormat.channelCount
        control.withLock {
            $0.averagePower = Array(repeating: -160, count: n)
            $0.peakPower = Array(repeating: -160, count: n)
        }
    }

    deinit {
        let rt = control.withLock { c -> PlayerRuntime? in
            let r = c.runtime
            c.runtime = nil
            return r
        }
        rt?.close()
        // The tasks following the session end with the player (the process session lives on:
        // their subscriptions would pile up, one pair per player ever played).
        sessionBox.withLock { $0.tasks }.forEach { $0.cancel() }
        broadcaster.finish()
    }

    // MARK: Observing

    /// Every event from now on, as an async sequence. Each call makes a new independent stream.
    public var events: AsyncStream<AudioPlayerEvent> { broadcaster.stream() }

    /// The audio session whose interruptions this player follows, as an AVAudioPlayer follows
    /// the app's AVAudioSession: another Tonearm session's interruption pauses it
    /// (`interruptionBegan`), its end with `shouldResume` plays on (`interruptionEnded`), and a
    /// duck request scales its volume until the duck ends. `play()` activates it, as
    /// AVAudioPlayer's `play()` activates the app's session.
    ///
    /// By default the process's ``AudioSession/shared``, as on iOS, where every player belongs
    /// to `AVAudioSession.sharedInstance()`: the player starts following it at its first `play()`,
    /// off the play path (connecting to the bus never delays the first sound), so a player that
    /// never plays never touches the bus. Set another session to follow that one at once; set
    /// nil to follow none (the sound server's requests to stop then pause the player directly).
    /// Set it from any thread; the player holds the session.
    public var audioSession: AudioSession? {
        get {
            switch sessionBox.withLock({ $0.choice }) {
            case .processDefault: return AudioSession.shared
            case .set(let s): return s
            }
        }
        set {
            let old = sessionBox.withLock { b -> [Task<Void, Never>] in
                let t = b.tasks
                b.choice = .set(newValue)
                b.followed = nil
                b.tasks = []
                return t
            }
            old.forEach { $0.cancel() }
            guard let session = newValue else { return }
            follow(session, connecting: true)
        }
    }

    /// Subscribes to `session`'s interruptions and duck requests; `connecting`: after the
    /// session has connected to its bus (blocks meanwhile), else at once (the play path, which
    /// connects and activates on a task of its own). Does nothing when another session was
    /// chosen meanwhile.
    private func follow(_ session: AudioSession, connecting: Bool) {
        if connecting { _ = session.isConnectedToBus }
        let (interruptions, ducking) = session.subscribeWithoutConnecting()
        let tasks = [
            Task.detached { [weak self] in
                for await i in interruptions {
                    guard let self else { return }
                    switch i {
                    case .began: self.handle(.interruptionBegan)
                    case .ended(let resume):
                        if resume { try? session.setActive(true) }
                        self.handle(.interruptionEnded(shouldResume: resume))
                    }
                }
            },
            Task.detached { [weak self] in
                for await d in ducking {
                    guard let self else { return }
                    switch d {
                    case .duckRequested(let level): self.sessionBox.withLock { $0.duck = level }
                    case .duckEnded: self.sessionBox.withLock { $0.duck = 1 }
                    }
                    self.volume = self.volume  // re-applies volume × duck
                }
            },
        ]
        let stale = sessionBox.withLock { b -> Bool in
            let current: AudioSession? = switch b.choice {
            case .processDefault: AudioSession.shared
            case .set(let s): s
            }
            guard current === session, b.followed == nil else { return true }
            b.followed = session
            b.tasks = tasks
            return false
        }
        if stale { tasks.forEach { $0.cancel() } }
    }

    /// `play()`: starts following the process default on the first call (a subscription, no
    /// bus), and activates the session the player belongs to — connecting to the bus never
    /// delays the first sound (``AudioSession/activateForPlay()``).
    private func activateSessionForPlay() {
        let (session, followed) = sessionBox.withLock { b -> (AudioSession?, Bool) in
            switch b.choice {
            case .processDefault: return (AudioSession.shared, b.followed != nil)
            case .set(let s): return (s, true)
            }
        }
        guard let session else { return }
        if !followed { follow(session, connecting: false) }
        session.activateForPlay()
    }

    /// The delegate, held weakly (called on the player's event thread).
    public var delegate: (any AudioPlayerDelegate)? {
        get { delegateBox.withLock { $0.value } }
        set { delegateBox.withLock { $0.value = newValue } }
    }

    // MARK: Transport

    /// Opens the output and fills the buffers so that `play()` starts at once. Returns false
    /// (and reports a `decodeErrorDidOccur` event) when the output cannot be opened.
    @discardableResult
    public func prepareToPlay() -> Bool { handle(.prepare) }

    /// Like `prepareToPlay()`, but throws the reason when the output cannot be opened (for
    /// callers that want the error, not just `false`).
    /// - Throws: ``TonearmError`` (usually ``TonearmError/outputUnavailable(driver:reason:)``).
    public func prepare() throws {
        if handle(.prepare) { return }
        throw control.withLock { $0.lastFailure } ?? TonearmError.invalidState("the player could not be prepared")
    }

    /// Starts or resumes playback. Returns false when playback could not start.
    @discardableResult
    public func play() -> Bool {
        activateSessionForPlay()
        return handle(.play(delayFrames: 0))
    }

    /// Starts playback at `time` on the ``deviceCurrentTime`` clock (for starting several players
    /// together). A time in the past plays at once.
    @discardableResult
    public func play(atTime time: Double) -> Bool {
        let delay = max(0, time - deviceCurrentTime)
        activateSessionForPlay()
        return handle(.play(delayFrames: Int((delay * format.sampleRate).rounded())))
    }

    /// Pauses; `play()` resumes from the same frame.
    public func pause() { handle(.pause) }

    /// Stops playback and releases the output (undoes `prepareToPlay`). `currentTime` is kept,
    /// as in AVAudioPlayer: set it to 0 to start over.
    public func stop() {
        let frame = currentFrame
        control.withLock { $0.machine.noteStopPosition(frame) }
        handle(.stop)
    }

    /// Whether the player is playing now.
    public var isPlaying: Bool { control.withLock { $0.machine.isPlaying } }

    /// The playback position in seconds within the audio. Setting it seeks, sample-accurately,
    /// whether playing, paused or stopped. Values are clamped to 0...duration.
    public var currentTime: Double {
        get { format.duration(ofFrames: currentFrame) }
        set {
            let frame = max(0, min(source.frameLength, format.frames(forSeconds: newValue.isFinite ? newValue : 0)))
            handle(.seek(frame: frame))
        }
    }

    /// The position in frames of the audio being heard now.
    public var currentFrame: AudioFramePosition {
        control.withLock { c in
            guard let rt = c.runtime else { return c.machine.resumeFrame }
            if rt.renderer.positionGeneration.load(ordering: .acquiring) != c.machine.generation {
                return c.machine.resumeFrame
            }
            // The position first, then the latency (the output raises its latency before it lets
            // the renderer render frames). Also while paused: what the output holds is not heard
            // then either (with the steady buffer a quarter of a second — the time must not jump
            // ahead by it at a pause and back at the resume).
            let rendered = rt.renderer.positionFrame.load(ordering: .relaxed)
            let latencyFrames = Int64(rt.driver.latency * format.sampleRate)
            var pos = rendered - latencyFrames
            if pos < c.generationStart && rendered >= c.generationStart { pos = c.generationStart }
            if pos < 0 { pos += source.frameLength }  // just looped: still hearing the previous pass
            return max(0, min(pos, source.frameLength))
        }
    }

    /// A clock for `play(atTime:)`: seconds on the process's monotonic clock, shared by every player.
    public var deviceCurrentTime: Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    /// The number of audio channels.
    public var numberOfChannels: Int { format.channelCount }

    /// How many times to play again after the first pass: 0 plays once, N plays N+1 times, -1
    /// loops until stopped. The loop point is seamless (sample-exact). Set while playing, it
    /// counts the passes after the current one (unless the end of the last pass is already
    /// decoded, about a second ahead).
    public var numberOfLoops: Int {
        get { control.withLock { $0.numberOfLoops } }
        set {
            control.withLock { c in
                c.numberOfLoops = max(-1, newValue)
                c.runtime?.decoder.updateLoops(c.numberOfLoops)
            }
        }
    }

    // MARK: Effects

    /// Effect nodes played after the equaliser, in order (for example an ``AudioUnitReverb`` and an
    /// ``AudioUnitTimePitch``). Each node must have one input and one output and belong to no other
    /// engine. Setting this while playing re-wires the graph live, without a gap. A node that
    /// cannot be connected is reported as a `decodeErrorDidOccur` event and the chain is left out.
    public var effects: [AudioNode] {
        get { control.withLock { $0.effects } }
        set {
            let failure: TonearmError? = control.withLock { c in
                c.effects = newValue
                do { try c.runtime?.setEffects(newValue) } catch {
                    return (error as? TonearmError) ?? .invalidArgument("\(error)")
                }
                return nil
            }
            if let failure { deliver([.decodeErrorDidOccur(.error(failure))]) }
        }
    }

    // MARK: Rate

    /// Allows ``rate`` to change the speed (as in AVAudioPlayer, set it before `prepareToPlay`/`play`).
    public var enableRate: Bool {
        get { control.withLock { $0.enableRate } }
        set { control.withLock { $0.enableRate = newValue } }
    }

    /// Playback speed, 0.5 … 2.0, with the pitch kept (librubberband). Takes effect at once while
    /// playing (the audio ahead is re-rendered from the current position). Ignored unless
    /// ``enableRate`` is true. Values outside the range are clamped.
    public var rate: Float {
        get { control.withLock { $0.rate } }
        set {
            let r = Float(min(max(Double(newValue.isFinite ? newValue : 1), TimeStretcher.rateRange.lowerBound),
                              TimeStretcher.rateRange.upperBound))
            let restart = control.withLock { c -> Bool in
                let changed = c.enableRate && c.rate != r
                c.rate = r
                return changed && c.runtime != nil
            }
            if restart { handle(.seek(frame: currentFrame)) }
        }
    }

    // MARK: Level

    /// Playback gain, 0...1 (linear). Changes are ramped over a few milliseconds (no clicks).
    public var volume: Float {
        get { control.withLock { $0.volume } }
        set { setVolume(newValue, fadeDuration: 0) }
    }

    /// Moves the volume to `volume` over `fadeDuration` seconds, smoothly.
    public func setVolume(_ volume: Float, fadeDuration: Double) {
        let v = max(0, min(1, volume.isFinite ? volume : 0))
        let minimumRamp = Int(format.sampleRate * 0.005)
        let frames = max(minimumRamp, Int(max(0, fadeDuration) * format.sampleRate))
        let duck = sessionBox.withLock { $0.duck }
        control.withLock { c in
            c.volume = v
            c.runtime?.renderer.commands.push(.gain(target: v * duck, frames: frames))
        }
    }

    /// Stereo position, -1 (left) … 0 (centre) … +1 (right). Only stereo audio is panned.
    public var pan: Float {
        get { control.withLock { $0.pan } }
        set {
            let p = max(-1, min(1, newValue.isFinite ? newValue : 0))
            control.withLock { c in
                c.pan = p
                c.runtime?.renderer.commands.push(.pan(p))
            }
        }
    }

    // MARK: Metering

    /// Turns level metering on or off (off by default, as in AVAudioPlayer).
    public var isMeteringEnabled: Bool {
        get { control.withLock { $0.meteringEnabled } }
        set {
            control.withLock { c in
                c.meteringEnabled = newValue
                c.runtime?.renderer.meteringEnabled.store(newValue, ordering: .relaxed)
            }
        }
    }

    /// Refreshes the values `averagePower(forChannel:)` and `peakPower(forChannel:)` return,
    /// from the audio rendered since the last call.
    public func updateMeters() {
        control.withLock { c in
            guard c.meteringEnabled, let rt = c.runtime else { return }
            let n = format.channelCount
            var peak = [Float](repeating: 0, count: n)
            var ms = [Float](repeating: 0, count: n)
            var frames = 0
            while var s = rt.renderer.meters.pop() {
                withUnsafeBytes(of: &s.peak) { pr in
                    withUnsafeBytes(of: &s.meanSquare) { mr in
                        let p = pr.bindMemory(to: Float.self), m = mr.bindMemory(to: Float.self)
                        for ch in 0..<min(n, MeterSnapshot.maxChannels) {
                            peak[ch] = max(peak[ch], p[ch])
                            ms[ch] += m[ch] * Float(s.frames)
                        }
                    }
                }
                frames += s.frames
            }
            for ch in 0..<n {
                let src = min(ch, MeterSnapshot.maxChannels - 1)
                let meanSquare = frames > 0 ? ms[src] / Float(frames) : 0
                c.averagePower[ch] = Self.decibels(power: meanSquare)
                c.peakPower[ch] = Self.decibels(amplitude: peak[src])
            }
        }
    }

    /// Average power of `channel` in dBFS (-160 … 0) as of the last `updateMeters()`.
    public func averagePower(forChannel channel: Int) -> Float {
        control.withLock { channel >= 0 && channel < $0.averagePower.count ? $0.averagePower[channel] : -160 }
    }

    /// Peak power of `channel` in dBFS (-160 … 0) as of the last `updateMeters()`.
    public func peakPower(forChannel channel: Int) -> Float {
        control.withLock { channel >= 0 && channel < $0.peakPower.count ? $0.peakPower[channel] : -160 }
    }

    static func decibels(power: Float) -> Float { power > 1e-16 ? max(-160, 10 * log10(power)) : -160 }
    static func decibels(amplitude: Float) -> Float { amplitude > 1e-8 ? max(-160, 20 * log10(amplitude)) : -160 }

    /// Underruns (late data rendered as silence) since the player was prepared.
    public var underrunCount: Int {
        control.withLock { $0.runtime.map { $0.renderer.underruns.load(ordering: .relaxed) + $0.driver.underrunCount } ?? 0 }
    }

    /// The output the player is using while prepared (for messages such as "playing to null").
    public var outputName: String? { control.withLock { $0.runtime?.driver.name } }

    // MARK: Carrying out the state machine

    /// An output being opened, outside the lock: what it is opened for, and what the state
    /// machine asked for meanwhile that needs it.
    private struct Opening {
        /// Identifies this opening (a stop or a newer opening replaces it).
        var token: UInt64
        var generation: UInt64
        var frame: AudioFramePosition
        /// Actions that need the runtime, issued while it was being opened (carried out, in
        /// order, when it is installed).
        var deferred: [AudioPlayerStateMachine.Action] = []
    }

    /// Feeds `input` to the state machine and carries out its actions. Opening the output (and
    /// waiting for the first decoded block) happens outside the player's lock, on the calling
    /// thread: every other call — volume, position, pause, stop — goes on meanwhile. What the
    /// machine asks for that needs the output before it is open is deferred to the moment it
    /// is installed; a stop meanwhile cancels the opening (the output is then closed unused).
    @discardableResult
    private func handle(_ input: AudioPlayerStateMachine.Input) -> Bool {
        var emitted: [AudioPlayerEvent] = []
        var released: AudioPlayer?
        var toClose: PlayerRuntime?
        var drainFirst = false
        var toOpen: Opening?
        let ok: Bool = control.withLock { c in
            let actions = c.machine.handle(input)
            var ok = true
            for a in actions {
                switch a {
                case .prepareOutput(let g, let f):
                    c.openingToken &+= 1
                    let o = Opening(token: c.openingToken, generation: g, frame: f)
                    c.opening = o
                    toOpen = o
                case .restartDecoding, .startRendering, .pauseRendering:
                    if c.runtime == nil, c.opening != nil {
                        c.opening?.deferred.append(a)
                    } else if !carryOut(a, in: &c, emitted: &emitted) {
                        ok = false
                    }
                case .closeOutput, .drainAndCloseOutput:
                    if a == .drainAndCloseOutput { drainFirst = true }
                    toClose = c.runtime
                    c.runtime = nil
                    c.opening = nil  // an opening in progress is closed when it returns
                case .retainSelf:
                    c.keepAlive = self
                case .releaseSelf:
                    released = c.keepAlive
                    c.keepAlive = nil
                case .emitFinished(let s):
                    emitted.append(.didFinishPlaying(successfully: s))
                case .emitInterruptionBegan:
                    emitted.append(.interruptionBegan)
                case .emitInterruptionEnded(let r):
                    emitted.append(.interruptionEnded(shouldResume: r))
                }
            }
            return ok
        }
        if let rt = toClose {
            outputGate.withLock { _ in
                if drainFirst { rt.driver.drain(timeout: rt.driver.latency + rt.engine.tailTime + 1) }
                rt.close()
            }
        }
        var opened = true
        if let o = toOpen { opened = outputGate.withLock { _ in open(o, emitted: &emitted) } }
        deliver(emitted)
        _ = released  // dropped here, outside the lock: may be the last reference
        return ok && opened
    }

    /// Opens the output for `o` without the lock, then installs it — unless a stop (or another
    /// opening) came first, in which case it is closed unused. False when it could not be opened.
    private func open(_ o: Opening, emitted: inout [AudioPlayerEvent]) -> Bool {
        let (effects, metering, volume, pan, loops, rate) = control.withLock {
            ($0.effects, $0.meteringEnabled, $0.volume, $0.pan, $0.numberOfLoops, $0.effectiveRate)
        }
        let duck = sessionBox.withLock { $0.duck }
        let rt: PlayerRuntime
        do {
            let driver = try makeOutput()
            rt = PlayerRuntime(
                source: source, driver: driver, eq: eq,
                onWarnings: { [weak self] ws in self?.deliver(ws.map { .decodeErrorDidOccur(.warning($0)) }) },
                onError: { [weak self] e in
                    let te = (e as? TonearmError) ?? .decodeFailed(path: self?.url?.path ?? "data", detail: "\(e)")
                    self?.deliver([.decodeErrorDidOccur(.error(te))])
                })
            do { try rt.setEffects(effects) } catch {
                emitted.append(.decodeErrorDidOccur(.error((error as? TonearmError) ?? .invalidArgument("\(error)"))))
            }
            rt.renderer.meteringEnabled.store(metering, ordering: .relaxed)
            rt.renderer.commands.push(.gain(target: volume * duck, frames: 0))
            rt.renderer.commands.push(.pan(pan))
            try rt.prepare(request: .init(generation: o.generation, startFrame: o.frame, loops: loops, endFrame: nil, rate: rate))
        } catch {
            let te = (error as? TonearmError) ?? .outputUnavailable(driver: "output", reason: "\(error)")
            var released: AudioPlayer?
            control.withLock { c in
                guard c.opening?.token == o.token else { return }
                c.opening = nil
                c.lastFailure = te
                // Back to idle: undo what the machine assumed.
                _ = c.machine.handle(.stop)
                released = c.keepAlive
                c.keepAlive = nil
            }
            _ = released
            emitted.append(.decodeErrorDidOccur(.error(te)))
            return false
        }
        var ok = true
        let installed: Bool = control.withLock { c in
            guard let current = c.opening, current.token == o.token else { return false }
            c.opening = nil
            rt.startEventPump({ [weak self] e in self?.renderEvent(e) },
                              outputEvents: { [weak self] e in self?.outputEvent(e) })
            c.runtime = rt
            c.generationStart = o.frame
            // What changed while the output was opened.
            if !c.effects.elementsEqual(effects, by: ===) {
                do { try rt.setEffects(c.effects) } catch {
                    emitted.append(.decodeErrorDidOccur(.error((error as? TonearmError) ?? .invalidArgument("\(error)"))))
                }
            }
            if c.meteringEnabled != metering { rt.renderer.meteringEnabled.store(c.meteringEnabled, ordering: .relaxed) }
            if c.volume != volume || c.pan != pan {
                rt.renderer.commands.push(.gain(target: c.volume * duck, frames: 0))
                rt.renderer.commands.push(.pan(c.pan))
            }
            if c.numberOfLoops != loops { rt.decoder.updateLoops(c.numberOfLoops) }
            for a in current.deferred where !carryOut(a, in: &c, emitted: &emitted) { ok = false }
            return true
        }
        if !installed { rt.close() }  // stopped meanwhile
        return ok
    }

    /// Carries out an action on the installed runtime. Lock held.
    private func carryOut(_ a: AudioPlayerStateMachine.Action, in c: inout Control, emitted: inout [AudioPlayerEvent]) -> Bool {
        switch a {
        case .restartDecoding(let g, let f):
            c.generationStart = f
            if let rt = c.runtime {
                let request = StreamDecoder.Request(generation: g, startFrame: f, loops: c.numberOfLoops, endFrame: nil,
                                                    rate: c.effectiveRate)
                // A seek replaces what is heard: the output drops what it holds of the old
                // position, and the renderer switches inside that flush, so that nothing of the new
                // is lost (the player's lock, then the output's: the output never waits for ours).
                rt.driver.flush {
                    rt.renderer.requestGeneration(g, startFrame: f)
                    rt.decoder.schedule(request)
                }
            }
        case .startRendering(let delay):
            if delay > 0 { c.runtime?.renderer.commands.push(.delay(frames: delay)) }
            do { try c.runtime?.startRendering() } catch {
                let te = (error as? TonearmError) ?? .outputUnavailable(driver: "output", reason: "\(error)")
                c.lastFailure = te
                emitted.append(.decodeErrorDidOccur(.error(te)))
                return false
            }
        case .pauseRendering:
            c.runtime?.pauseRendering()
        default:
            break
        }
        return true
    }

    private func renderEvent(_ e: RenderEvent) {
        switch e {
        case .ended(let g): handle(.reachedEnd(generation: g))
        case .itemEnded, .starved: break
        }
    }

    private func outputEvent(_ e: AudioOutputEvent) {
        // With a session followed, the server's requests become the session's interruptions,
        // which every player following it (this one included) acts on.
        let session = sessionBox.withLock { $0.followed }
        switch e {
        case .corkRequested:
            if let session { session.reportServerInterruption(began: true) } else { handle(.interruptionBegan) }
        case .uncorkRequested:
            if let session { session.reportServerInterruption(began: false) } else { handle(.interruptionEnded(shouldResume: true)) }
        case .deviceLost:
            let frame = currentFrame
            let watching: Bool = control.withLock { c in
                c.machine.noteStopPosition(frame)
                c.outputWatch?.cancel()
                c.outputWatch = c.runtime?.driver.watchForReturn { [weak self] in self?.outputReturned() }
                return c.outputWatch != nil
            }
            handle(.outputLost(watching: watching))
        case .deviceRemoved: handle(.pause)  // the unplugged-headphones rule: not on out of the speakers
        case .drained, .moved, .bufferChanged: break
        }
    }

    /// The watch's thread: the lost output answers again (the player opens it again here when it
    /// plays on).
    private func outputReturned() {
        control.withLock { $0.outputWatch = nil }
        handle(.outputReturned)
    }

    private func deliver(_ events: [AudioPlayerEvent]) {
        guard !events.isEmpty else { return }
        let d = delegate
        for e in events {
            // The delegate first, then the streams: a stream consumer sees the delegate's effects.
            if let d {
                switch e {
                case .didFinishPlaying(let s): d.audioPlayerDidFinishPlaying(self, successfully: s)
                case .decodeErrorDidOccur(let p): d.audioPlayerDecodeErrorDidOccur(self, error: p)
                case .interruptionBegan: d.audioPlayerBeginInterruption(self)
                case .interruptionEnded(let r): d.audioPlayerEndInterruption(self, shouldResume: r)
                }
            }
            broadcaster.yield(e)
        }
    }
}
