// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Observation
import Synchronization
import TonearmCodecs
import TonearmCore
import TonearmEngine
import TonearmNetwork
import TonearmVideo

/// One thing a ``Player`` plays (the counterpart of `AVPlayerItem`): a local file, or an
/// `http`/`https` resource fetched ahead of playback — a progressive file (seeking with Range
/// requests) or an endless radio stream (ICY metadata becomes ``timedMetadata``).
///
/// An item starts loading when a player takes it: ``status`` becomes ``Status/readyToPlay`` once
/// its header has been read, or ``Status/failed(_:)`` with a typed error that says what is wrong
/// (the server's status, a timeout, a body that is not audio). An item belongs to one player at
/// a time; when the player lets go of it (``Player/replaceCurrentItem(with:)``), its fetching
/// stops and a later player loads it again.
///
/// Threading: every member may be used from any thread. Events come on the owning player's
/// control queue.
public final class PlayerItem: @unchecked Sendable , Observable {
    /// Whether the item can be played (`AVPlayerItem.Status`).
    public enum Status: Sendable, Hashable, CustomStringConvertible {
        /// Not loaded yet (or no longer, after its player let it go).
        case unknown
        case readyToPlay
        /// It cannot be played, for this reason.
        case failed(TonearmError)

        public var description: String {
            switch self {
            case .unknown: "unknown"
            case .readyToPlay: "ready to play"
            case .failed(let e): "failed: \(e.description)"
            }
        }
    }

    /// How long the item is (`CMTime`, with its indefinite value).
    public enum Duration: Sendable, Hashable {
        /// Not known yet (the item has not loaded).
        case unknown
        /// A live stream or radio: it has no end.
        case indefinite
        case seconds(Double)

        /// The length in seconds, when it has one.
        public var seconds: Double? {
            if case .seconds(let s) = self { return s }
            return nil
        }
    }

    /// The address of the item: a `file:` URL or an `http`/`https` one.
    public let url: URL
    /// How the network part fetches (limits, retries, read-ahead); ignored for local files.
    public let networkOptions: NetworkSourceOptions
    /// The audio stream played, by its index in the container (a video's second language, say);
    /// nil: the file's best audio stream. Local files only.
    public let audioStream: Int?

    /// What the player gets from the item: its signals, on the fetch or loader thread.
    enum Signal: Sendable {
        case ready
        case failed(TonearmError)
        /// Bytes arrived (or everything has): the buffer may now be long enough.
        case loaded
        case metadata([String: String])
        case accessEntry(NetworkAccessLogEntry)
        case errorEntry(NetworkErrorLogEntry)
        /// A video output was added or removed.
        case videoOutputsChanged
    }

    /// What the owning player lends the item to answer questions about the buffer.
    struct Attachment: Sendable {
        var signal: @Sendable (Signal) -> Void
        /// Where playback is.
        var currentTime: @Sendable () -> Double
        /// How far the picture's decoder is ahead, while the player decodes the item's video
        /// (nil: it does not).
        var videoBuffer: @Sendable () -> VideoBufferLevel? = { nil }
    }

    private struct State {
        var status: Status = .unknown
        var file: AudioFile?
        /// What the player decodes: the file, or for a VOD HLS stream the seekable wrapper.
        var playback: (any PlaybackSource)?
        /// A VOD HLS stream's first stream's timestamps at its start: the item's timeline origin
        /// for the sound and the picture (see ``hlsOrigin``).
        var hlsOrigin: TimestampOrigin?
        var network: ItemFetch?
        var duration: Duration = .unknown
        var timedMetadata: [String: String] = [:]
        var preferredForwardBufferDuration: Double = 0
        var attachment: Attachment?
        /// Bumped on every attach, so a loader of an earlier attachment reports nothing.
        var epoch: UInt64 = 0
        var accessReported = 0
        var errorsReported = 0
        var stalls = 0
        var videoTracks: [VideoTrackInfo] = []
        var videoOutputs: [PlayerItemVideoOutput] = []
        /// The presentation size last announced (``PlayerEvent/presentationSizeChanged(_:)``).
        var announcedSize: VideoSize = .zero
    }

    private let state = Mutex(State())
    private let broadcaster = EventBroadcaster<PlayerEvent>()
    /// Observation (`withObservationTracking`, SwiftUI-style observers): the properties below
    /// report their reads here, and their changes when they happen.
    private let registrar = ObservationRegistrar()

    /// An item for `url`: a `file:` URL, or `http`/`https`.
    public init(url: URL, networkOptions: NetworkSourceOptions = NetworkSourceOptions()) {
        self.url = url
        self.networkOptions = networkOptions
        audioStream = nil
    }

    /// An item for the local file at `url` playing its audio stream `audioStream` (the stream's
    /// index in the container, as ``AudioFile/init(path:audioStream:)`` takes it); the item
    /// fails with ``TonearmError/noSuchTrack(path:track:detail:)`` when that stream is not audio.
    public init(url: URL, audioStream: Int?) {
        self.url = url
        networkOptions = NetworkSourceOptions()
        self.audioStream = audioStream
    }

    /// An item for a path or an `http(s)://` address.
    public convenience init(pathOrURL: String, networkOptions: NetworkSourceOptions = NetworkSourceOptions()) {
        let isURL = pathOrURL.contains("://")
        self.init(url: isURL ? (URL(userText: pathOrURL) ?? URL(fileURLWithPath: pathOrURL)) : URL(fileURLWithPath: pathOrURL),
                  networkOptions: networkOptions)
    }

    /// The item's notifications (status, end, stalls, logs, timed metadata), from the moment of
    /// the call; the same ones also come on the owning player's ``Player/events``.
    public var events: AsyncStream<PlayerEvent> { broadcaster.stream(bufferingNewest: 1024) }

    public var status: Status {
        registrar.access(self, keyPath: \.status)
        return state.withLock { $0.status }
    }
    /// The error that made the item fail, if it did.
    public var error: TonearmError? {
        if case .failed(let e) = status { return e }
        return nil
    }
    public var duration: Duration {
        registrar.access(self, keyPath: \.duration)
        return state.withLock { $0.duration }
    }
    /// The tags of the item (title, artist, … ; empty before it has loaded).
    public var metadata: AudioMetadata { state.withLock { $0.file?.metadata ?? AudioMetadata() } }
    /// The format of the item as stored (codec, rate, channels, bit rate), once loaded.
    public var format: SourceFormat? { state.withLock { $0.file?.fileFormat } }
    /// The latest timed metadata heard: a radio stream's `StreamTitle` and `StreamUrl`.
    public var timedMetadata: [String: String] {
        registrar.access(self, keyPath: \.timedMetadata)
        return state.withLock { $0.timedMetadata }
    }
    /// The video streams of the item (empty for audio, and before it has loaded). Read when the
    /// item opens; for HLS, those of the variant the stream starts with, and then the selected
    /// track follows the size of the variant whose frames are shown.
    public var videoTracks: [VideoTrackInfo] { state.withLock { $0.videoTracks } }
    /// Whether the item is a progressive HTTP(S) download (not an HLS playlist).
    var isProgressiveHTTP: Bool {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else { return false }
        return !ItemFetch.isHLS(url)
    }

    /// Whether the item is an HLS stream (an `http(s)` `.m3u8` playlist).
    var isHLS: Bool {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else { return false }
        return ItemFetch.isHLS(url)
    }

    /// The track a video output shows: the default one, else the first.
    public var selectedVideoTrack: VideoTrackInfo? {
        let tracks = videoTracks
        return tracks.first(where: \.isDefault) ?? tracks.first
    }

    /// The subtitles drawn over the picture (the legible `AVMediaSelectionGroup`'s selection),
    /// read by the video decoding thread before each frame.
    let subtitleChoice = SubtitleChoice()
    private let subtitleTrackCache = Mutex<[SubtitleTrackInfo]?>(nil)

    /// The subtitle streams of a local file, text and bitmap (the legible media selection
    /// group's options). Read from the file on first use; empty for a network item.
    public var subtitleTracks: [SubtitleTrackInfo] {
        if let known = subtitleTrackCache.withLock({ $0 }) { return known }
        let tracks = url.isFileURL ? ((try? SubtitleTrackInfo.tracks(inFileAt: url.path)) ?? []) : []
        subtitleTrackCache.withLock { $0 = tracks }
        return tracks
    }

    /// The subtitles shown, nil for none (the default).
    public var selectedSubtitle: SubtitleSelection? { subtitleChoice.selection }

    /// Shows `subtitle` (a track of ``subtitleTracks`` — text, or bitmap: PGS, DVD, DVB — or a
    /// subtitle file) over the picture, or none with nil (`AVPlayerItem.select(_:in:)`); while
    /// playing, from the next frame decoded. Throws `invalidArgument` for a track that is not a
    /// subtitle track of this item.
    public func select(subtitle: SubtitleSelection?) throws(TonearmError) {
        if case .track(let t) = subtitle, !subtitleTracks.contains(where: { $0.trackID == t.trackID }) {
            throw .invalidArgument("\(url.lastPathComponent): track \(t.trackID) is not one of its subtitle tracks")
        }
        subtitleChoice.selection = subtitle
    }

    /// The picture shown has `shape` (a frame without planes; the player's presenting side):
    /// for an HLS item, whose variants may differ in size, the selected video track — its coded
    /// and display size, pixel aspect ratio and rotation — and so ``presentationSize`` follow the
    /// variant on screen. Other items' tracks say it from the start.
    ///
    /// Returns the new ``presentationSize`` when it differs from the one last announced (the
    /// first frame of the item, an HLS variant of another size), for the player to announce.
    func pictureShown(shape: VideoFrame) -> VideoSize? {
        let display = shape.displaySize
        return state.withLock { s -> VideoSize? in
            let size = VideoSize(width: display.width, height: display.height)
            defer { s.announcedSize = size }
            let changed = size != s.announcedSize ? size : nil
            guard isHLS, let i = s.videoTracks.firstIndex(where: \.isDefault) ?? (s.videoTracks.isEmpty ? nil : 0) else { return changed }
            s.videoTracks[i].codedWidth = shape.width
            s.videoTracks[i].codedHeight = shape.height
            s.videoTracks[i].displayWidth = display.width
            s.videoTracks[i].displayHeight = display.height
            s.videoTracks[i].pixelAspectRatio = shape.pixelAspectRatio
            s.videoTracks[i].rotation = shape.rotation
            return changed
        }
    }

    /// The size the picture is shown at, in square pixels and upright (the selected video
    /// track's display size; for HLS, the variant's on screen); ``VideoSize/zero`` for audio or
    /// before loading.
    public var presentationSize: VideoSize {
        registrar.access(self, keyPath: \.presentationSize)
        guard let t = selectedVideoTrack else { return .zero }
        return VideoSize(width: t.displayWidth, height: t.displayHeight)
    }

    /// The video outputs attached (`AVPlayerItem.outputs`).
    public var outputs: [PlayerItemVideoOutput] { state.withLock { $0.videoOutputs } }

    /// Attaches a video output: while the item plays, its frames reach the output (the video is
    /// decoded only while an output or a renderer is attached).
    public func add(_ output: PlayerItemVideoOutput) {
        let attachment = state.withLock { s -> Attachment? in
            guard !s.videoOutputs.contains(where: { $0 === output }) else { return nil }
            s.videoOutputs.append(output)
            return s.attachment
        }
        attachment?.signal(.videoOutputsChanged)
    }

    /// Detaches a video output (the video stops being decoded when it was the last).
    public func remove(_ output: PlayerItemVideoOutput) {
        let attachment = state.withLock { s -> Attachment? in
            let before = s.videoOutputs.count
            s.videoOutputs.removeAll { $0 === output }
            return s.videoOutputs.count == before ? nil : s.attachment
        }
        attachment?.signal(.videoOutputsChanged)
    }

    /// Whether the item is fetched from the network.
    public var isRemote: Bool { !url.isFileURL }

    /// Seconds of audio the player wants ahead of the playhead before it starts or resumes after
    /// a stall. 0 (the default) lets the player choose: 2 s, or 1 s for a live stream.
    public var preferredForwardBufferDuration: Double {
        get { state.withLock { $0.preferredForwardBufferDuration } }
        set { state.withLock { $0.preferredForwardBufferDuration = max(0, newValue.isFinite ? newValue : 0) } }
    }

    /// The forward buffer the player waits for.
    var forwardBufferGoal: Double {
        state.withLock { s in
            if s.preferredForwardBufferDuration > 0 { return s.preferredForwardBufferDuration }
            return s.duration == .indefinite ? 1 : 2
        }
    }

    // MARK: Buffer

    /// The requests made so far (`AVPlayerItemAccessLog`): empty for a local file.
    public var accessLog: [NetworkAccessLogEntry] { network?.accessLog ?? [] }
    /// How many times playback stalled because the audio ran out before the end
    /// (`AVPlayerItemAccessLogEvent.numberOfStalls`).
    public var numberOfStalls: Int {
        registrar.access(self, keyPath: \.numberOfStalls)
        return state.withLock { $0.stalls }
    }
    /// The network problems met so far, also those overcome (`AVPlayerItemErrorLog`).
    public var errorLog: [NetworkErrorLogEntry] { network?.errorLog ?? [] }

    /// The parts of the timeline that are in memory (estimated from the bytes, as every
    /// streaming player does): the whole item for a local file; for an endless or HLS stream,
    /// from the playhead to as far as has arrived.
    public var loadedTimeRanges: [TimeRange] {
        registrar.access(self, keyPath: \.loadedTimeRanges)
        if let d = videoOnlyDuration { return [TimeRange(start: 0, duration: d)] }
        guard let (file, net, attachment) = loaded() else { return [] }
        guard let net else { return [TimeRange(start: 0, duration: file.duration)] }
        return net.loadedTimeRanges(now: attachment?.currentTime() ?? 0, file: file)
    }

    /// The parts of the timeline a seek can go to: all of a local file, of a progressive
    /// download of known length or of a VOD HLS stream; none of a radio or live stream.
    public var seekableTimeRanges: [TimeRange] {
        if let d = videoOnlyDuration { return [TimeRange(start: 0, duration: d)] }
        guard let (file, net, _) = loaded() else { return [] }
        if let net {
            guard net.isSeekable(file: file), let d = duration.seconds else { return [] }
            return [TimeRange(start: 0, duration: d)]
        }
        return file.isLengthKnown ? [TimeRange(start: 0, duration: file.duration)] : []
    }

    /// Seconds of audio ahead of the playhead, decoded or not (infinite for a local file or a
    /// download that has finished).
    public var bufferedSecondsAhead: Double {
        registrar.access(self, keyPath: \.bufferedSecondsAhead)
        if videoOnlyDuration != nil { return .infinity }
        guard let (file, net, attachment) = loaded() else { return 0 }
        guard let net, !net.isFinished else { return .infinity }
        return net.secondsAhead(now: attachment?.currentTime() ?? 0, file: file)
    }

    /// Whether playback can go on from here without stalling: everything has arrived, or the
    /// buffer ahead covers ``preferredForwardBufferDuration`` — and, while the player decodes
    /// the item's video, the picture keeps up too: its decoder has filled its queue of frames
    /// (or decoded to the end) since it began, the last seek, or the queue last ran empty.
    public var isPlaybackLikelyToKeepUp: Bool {
        registrar.access(self, keyPath: \.isPlaybackLikelyToKeepUp)
        return soundIsLikelyToKeepUp && (videoBuffer?.keepsUp ?? true)
    }

    /// The sound's half of ``isPlaybackLikelyToKeepUp``: what an audio underrun is judged by (the
    /// picture's queue is empty right after every seek; a local file refills it in milliseconds,
    /// and stalling the sound for it put a seek's picture 279 ms behind in AVSyncPulseTests).
    var soundIsLikelyToKeepUp: Bool {
        guard status == .readyToPlay else { return false }
        return bufferedSecondsAhead >= forwardBufferGoal
    }

    /// Whether the buffer has run dry (nothing ahead of the playhead, more to come): the sound's,
    /// or while the player decodes the item's video, the picture's (no decoded frame waiting).
    public var isPlaybackBufferEmpty: Bool {
        registrar.access(self, keyPath: \.isPlaybackBufferEmpty)
        guard status == .readyToPlay else { return true }
        return bufferedSecondsAhead < 0.05 || (videoBuffer?.isEmpty ?? false)
    }

    /// Whether the buffer is as full as it gets: everything has arrived, or the read-ahead
    /// limit (``NetworkSourceOptions/maximumAhead``) is reached — and the picture's queue of
    /// decoded frames is full (or decoded to the end), while the player decodes the video.
    public var isPlaybackBufferFull: Bool {
        registrar.access(self, keyPath: \.isPlaybackBufferFull)
        guard videoBuffer?.isFull ?? true else { return false }
        if videoOnlyDuration != nil { return true }
        guard status == .readyToPlay, let (_, net, _) = loaded() else { return false }
        guard let net else { return true }
        return net.isFull(options: networkOptions)
    }

    /// The picture's decoder, while the player decodes the item's video.
    private var videoBuffer: VideoBufferLevel? { state.withLock { $0.attachment }?.videoBuffer() }

    private var network: ItemFetch? { state.withLock { $0.network } }

    /// Another reader of a progressive item's download, for its video decoder (the file is
    /// fetched once, for the sound and the picture); nil before the item has loaded, and for
    /// HLS.
    func makeNetworkReader() -> NetworkByteSource? {
        guard case .progressive(let source)? = network else { return nil }
        return source.makeReader()
    }

    /// The HLS stream the sound reads now (after a seek, the one opened again at the target's
    /// segment), for its video decoder to take a reader of; nil before the item has loaded, and
    /// for other items.
    func hlsStream() -> HLSByteSource? {
        guard case .hls(let source, _)? = network else { return nil }
        return source
    }

    /// Guards ``seekStream`` and the choice between joining a stream and opening one: the
    /// sound's seek and the picture's, on their own threads, meet here in either order.
    private let hlsStreams = NSLock()
    /// The last HLS stream opened at a time (by the sound's seek or by the picture), held weakly
    /// (its readers keep it), and the seconds of it that have arrived.
    private var seekStream: (source: WeakHLSSource, arrived: HLSArrival)?

    /// A stream at `time` for the picture (its decoding thread), so that no segment is fetched
    /// twice: a reader from the kept segment that holds `time` (``HLSByteSource/makeReader(at:)``)
    /// of the stream opened for a seek to `time` (the sound's, when its seek came first), or —
    /// when the picture starts rather than seeks — of the stream the sound reads; else a stream
    /// of its own at `time`, which the sound's seek to the same time then reads too (in either
    /// order, however long the sound's seek takes).
    func hlsStreamForPicture(at time: Double, seeking: Bool) -> HLSByteSource {
        hlsStreams.withLock {
            if let known = seekStream?.source.value, abs(known.options.startTime - time) < 1e-3,
               let reader = known.makeReader(at: time) {
                return reader
            }
            if !seeking, let reader = hlsStream()?.makeReader(at: time) { return reader }
            return openSeekStream(at: time, epoch: state.withLock { $0.epoch }).source
        }
    }

    /// A stream at `time` for the sound's seek (its decoder thread): a reader from the start of
    /// the stream the picture opened for the same seek while its first bytes are kept, else a
    /// new one; with the seconds of it that have arrived.
    private func hlsStreamForSound(at time: Double, epoch: UInt64) -> (source: HLSByteSource, arrived: HLSArrival) {
        hlsStreams.withLock {
            if let known = seekStream, let source = known.source.value, abs(source.options.startTime - time) < 1e-3,
               let reader = source.makeReader() {
                return (reader, known.arrived)
            }
            return openSeekStream(at: time, epoch: epoch)
        }
    }

    /// A new HLS stream at `time`, with the sound's options (its variant choice and limits; the
    /// item's limits before it loaded), whose events are the item's of `epoch`, kept as
    /// ``seekStream``. Under `hlsStreams`.
    private func openSeekStream(at time: Double, epoch: UInt64) -> (source: HLSByteSource, arrived: HLSArrival) {
        var options = hlsStream()?.options ?? {
            var o = HLSSourceOptions()
            o.limits = networkOptions.limits
            return o
        }()
        options.startTime = time
        let arrived = HLSArrival()
        let item = WeakItem(self)
        let source = HLSByteSource(url: url, options: options,
                                   onEvent: ItemFetch.countingArrivals(arrived) { e in item.item?.hlsEvent(e, epoch: epoch) })
        seekStream = (WeakHLSSource(source), arrived)
        return (source, arrived)
    }

    /// The length of a video without sound (a local file played against silence); nil otherwise.
    private var videoOnlyDuration: Double? {
        state.withLock { s in s.file == nil && s.playback is SilentSource ? s.duration.seconds : nil }
    }

    /// Whether the item is a video without sound (played against silence).
    public var hasAudio: Bool { state.withLock { !($0.playback is SilentSource) } }

    private func loaded() -> (AudioFile, ItemFetch?, Attachment?)? {
        state.withLock { s in s.file.map { ($0, s.network, s.attachment) } }
    }

    // MARK: Player side

    /// The player takes the item: loading starts (on a thread of its own) unless it has loaded.
    /// Player's control plane.
    func attach(_ attachment: Attachment) {
        let (epoch, needsLoad) = state.withLock { s -> (UInt64, Bool) in
            s.epoch += 1
            s.attachment = attachment
            s.accessReported = 0
            s.errorsReported = 0
            return (s.epoch, s.file == nil)
        }
        if needsLoad {
            let t = Thread { [self] in load(epoch: epoch) }
            t.name = "tonearm.item-loader"
            t.start()
        } else {
            attachment.signal(.ready)
        }
    }

    /// The player lets go: fetching stops (a reader blocked on the network wakes and fails), and
    /// the item is unloaded. Player's control plane.
    func detach() {
        let net = state.withLock { s -> ItemFetch? in
            s.epoch += 1
            s.attachment = nil
            let n = s.network
            if n != nil {
                s.network = nil
                s.file = nil
                s.playback = nil
                s.hlsOrigin = nil
                s.duration = .unknown
                if s.status == .readyToPlay { s.status = .unknown }
            }
            return n
        }
        net?.cancel()
    }

    /// The audio file of the item (nil before it is ready).
    var file: AudioFile? { state.withLock { $0.file } }
    /// What the player decodes (nil before the item is ready): the file, or a VOD HLS stream
    /// that seeks by opening the stream again at the segment of the target.
    var playbackSource: (any PlaybackSource)? { state.withLock { $0.playback } }

    /// A VOD HLS item's timeline origin, as the first stream (from the first segment) states it:
    /// where the sound of a stream reopened at a later segment goes (its first sample against
    /// the origin's) and where its picture's time 0 is (the container's start); nil for other
    /// items and live streams. Any thread.
    var hlsOrigin: TimestampOrigin? { state.withLock { $0.hlsOrigin } }

    /// Marks the item failed (a failure during playback). Returns whether it changed.
    func markFailed(_ error: TonearmError) {
        state.withLock { $0.status = .failed(error) }
    }

    /// Counts a stall. Player's control queue.
    func noteStall() { state.withLock { $0.stalls += 1 } }

    /// Records timed metadata as it is heard.
    func setTimedMetadata(_ fields: [String: String]) {
        state.withLock { $0.timedMetadata.merge(fields) { _, new in new } }
    }

    /// Delivers one of the item's notifications to its own subscribers.
    func broadcast(_ event: PlayerEvent) {
        switch event {
        case .itemStatusChanged:
            changed(\.status)
            changed(\.duration)
            changed(\.presentationSize)  // the tracks are known once loaded
            bufferChanged()
        case .presentationSizeChanged: changed(\.presentationSize)
        case .timedMetadata: changed(\.timedMetadata)
        case .playbackStalled:
            changed(\.numberOfStalls)
            bufferChanged()
        default: break
        }
        broadcaster.yield(event)
        postNotification(for: event)
    }

    // MARK: AVPlayerItem's notifications

    /// `AVPlayerItem.didPlayToEndTimeNotification`: the item played to its end (object: the item).
    public static let didPlayToEndTimeNotification = Notification.Name("AVPlayerItemDidPlayToEndTimeNotification")
    /// `AVPlayerItem.failedToPlayToEndTimeNotification`: it could not; the error is under
    /// ``failedToPlayToEndTimeErrorKey``.
    public static let failedToPlayToEndTimeNotification = Notification.Name("AVPlayerItemFailedToPlayToEndTimeNotification")
    /// `AVPlayerItem.playbackStalledNotification`: the audio ran out before the end.
    public static let playbackStalledNotification = Notification.Name("AVPlayerItemPlaybackStalledNotification")
    /// `AVPlayerItem.newAccessLogEntryNotification` and `newErrorLogEntryNotification`.
    public static let newAccessLogEntryNotification = Notification.Name("AVPlayerItemNewAccessLogEntryNotification")
    public static let newErrorLogEntryNotification = Notification.Name("AVPlayerItemNewErrorLogEntryNotification")
    /// `AVPlayerItemFailedToPlayToEndTimeErrorKey`: the ``TonearmError`` that stopped it.
    public static let failedToPlayToEndTimeErrorKey = "AVPlayerItemFailedToPlayToEndTimeErrorKey"

    /// Posts `event`'s `AVPlayerItem` notification, if it has one, on `NotificationCenter.default`
    /// with the item as its object — as iOS posts them, for code that observes them there (the
    /// ``events`` sequence is the Swift-native way). On the thread that delivers the event (the
    /// player's control thread; never the render thread).
    private func postNotification(for event: PlayerEvent) {
        let name: Notification.Name
        var info: [AnyHashable: Any]?
        switch event {
        case .didPlayToEndTime: name = Self.didPlayToEndTimeNotification
        case .failedToPlayToEndTime(let error):
            name = Self.failedToPlayToEndTimeNotification
            info = [Self.failedToPlayToEndTimeErrorKey: error]
        case .playbackStalled: name = Self.playbackStalledNotification
        case .newAccessLogEntry: name = Self.newAccessLogEntryNotification
        case .newErrorLogEntry: name = Self.newErrorLogEntryNotification
        default: return
        }
        NotificationCenter.default.post(name: name, object: self, userInfo: info)
    }

    /// Tells observers that `keyPath` changed (any thread; it has changed already — observers
    /// read it again).
    private func changed<V>(_ keyPath: KeyPath<PlayerItem, V>) {
        registrar.withMutation(of: self, keyPath: keyPath) {}
    }

    /// Bytes arrived, the playhead moved on or the picture's queue filled: what is buffered
    /// ahead (and whether it is enough) may have changed. Any thread.
    func bufferChanged() {
        changed(\.loadedTimeRanges)
        changed(\.bufferedSecondsAhead)
        changed(\.isPlaybackLikelyToKeepUp)
        changed(\.isPlaybackBufferEmpty)
        changed(\.isPlaybackBufferFull)
    }

    // MARK: Loading

    private func load(epoch: UInt64) {
        let result: Result<(AudioFile, ItemFetch?), TonearmError>
        var videoTracks: [VideoTrackInfo] = []
        var videoOnly: Double?
        if url.isFileURL {
            do { result = .success((try AudioFile(path: url.path, audioStream: audioStream), nil)) } catch { result = .failure(error) }
            // The video streams, read here (the loader's thread, no lock held): a file that does
            // not open as video has none. Read from the sound's demuxer (the file is not opened
            // and probed again for them); a FLAC file read natively has none.
            switch result {
            case .success(let (file, _)):
                videoTracks = file.openedFormatContext.map { VideoTrackInfo.tracks(inOpened: $0, name: url.path) } ?? []
            case .failure(.noAudioTrack):
                // A video without sound plays against silence as long as the video.
                videoTracks = (try? VideoTrackInfo.tracks(inFileAt: url.path)) ?? []
                if !videoTracks.isEmpty,
                   let d = (try? VideoDecoder(path: url.path))?.duration ?? videoTracks.first?.duration, d > 0 {
                    videoOnly = d
                }
            case .failure:
                break
            }
        } else if let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" {
            let fetch = makeFetch(epoch: epoch)
            let current = state.withLock { s -> Bool in
                guard s.epoch == epoch else { return false }
                s.network = fetch
                return true
            }
            guard current else { return }
            do {
                let file = try fetch.openFile(name: url.absoluteString)
                result = .success((file, fetch))
                // The video streams, as the container states them: a progressive file's, or the
                // segments' of an HLS stream's first variant (the player decodes them from a
                // reader of the same download).
                videoTracks = VideoTrackInfo.tracks(inOpened: file.formatContext, name: url.absoluteString)
            } catch {
                result = .failure(error)
            }
        } else {
            result = .failure(.network(url: url.absoluteString, failure: .schemeNotAllowed(url.scheme ?? "")))
        }
        if let videoOnly {
            let attachment = state.withLock { s -> Attachment? in
                guard s.epoch == epoch else { return nil }
                s.videoTracks = videoTracks
                s.duration = .seconds(videoOnly)
                s.playback = SilentSource(duration: videoOnly)
                s.status = .readyToPlay
                return s.attachment
            }
            attachment?.signal(.ready)
            return
        }
        let attachment = state.withLock { s -> Attachment? in
            guard s.epoch == epoch else { return nil }
            switch result {
            case .success(let (file, fetch)):
                s.file = file
                s.videoTracks = videoTracks
                s.duration = fetch?.duration(file: file) ?? .seconds(file.duration)
                s.playback = file
                if case .hls(let source, _)? = fetch, let d = source.duration {
                    let soundOptions = source.options, itemURL = url
                    let origin = file.timestampOrigin
                    s.hlsOrigin = origin
                    s.playback = HLSPlayback(
                        url: url, file: file, source: source, duration: d, origin: origin,
                        open: { [weak self] time in
                            if let self { return self.hlsStreamForSound(at: time, epoch: epoch) }
                            var options = soundOptions
                            options.startTime = time
                            return (HLSByteSource(url: itemURL, options: options), HLSArrival())
                        },
                        onReopen: { [weak self] next, arrived in self?.reopened(next, arrived: arrived, epoch: epoch) })
                }
                s.status = .readyToPlay
            case .failure(let e):
                s.status = .failed(e)
            }
            return s.attachment
        }
        guard let attachment else {
            if case .success(let (_, fetch?)) = result { fetch.cancel() }
            return
        }
        reportLogs(attachment, epoch: epoch)
        if case .failure = result { state.withLock { if $0.epoch == epoch { $0.network = nil } } }
        switch result {
        case .success: attachment.signal(.ready)
        case .failure(let e): attachment.signal(.failed(e))
        }
    }

    /// The fetching for an `http(s)` URL: HLS for an `.m3u8` playlist, else a progressive download.
    private func makeFetch(epoch: UInt64) -> ItemFetch {
        ItemFetch.make(url: url, options: networkOptions,
                       onNetworkEvent: { [weak self] e in self?.networkEvent(e, epoch: epoch) },
                       onHLSEvent: { [weak self] e in self?.hlsEvent(e, epoch: epoch) })
    }

    /// Decoder thread: a seek opened the HLS stream again on `next`; the logs and the buffer
    /// follow it from now on.
    private func reopened(_ next: HLSByteSource, arrived: HLSArrival, epoch: UInt64) {
        let old = hlsStreams.withLock {
            state.withLock { s -> ItemFetch?? in
                guard s.epoch == epoch else { return nil }
                defer {
                    s.network = .hls(next, arrived: arrived)
                    s.accessReported = 0
                    s.errorsReported = 0
                }
                return .some(s.network)
            }
        }
        old??.cancel()
    }

    /// Fetch thread: turns a progressive source's events into signals for the player.
    private func networkEvent(_ e: NetworkSourceEvent, epoch: UInt64) {
        guard let attachment = state.withLock({ s in s.epoch == epoch ? s.attachment : nil }) else { return }
        switch e {
        case .loaded:
            bufferChanged()
            attachment.signal(.loaded)
        case .finished, .failed:
            // Nothing more will come: what has arrived is all the buffer there will be.
            reportLogs(attachment, epoch: epoch)
            bufferChanged()
            attachment.signal(.loaded)
        case .metadata(let fields):
            attachment.signal(.metadata(fields))
        case .opened, .requested, .retrying:
            reportLogs(attachment, epoch: epoch)
        }
    }

    /// Fetch thread: turns an HLS source's events into signals for the player.
    private func hlsEvent(_ e: HLSSourceEvent, epoch: UInt64) {
        guard let attachment = state.withLock({ s in s.epoch == epoch ? s.attachment : nil }) else { return }
        switch e {
        case .segmentLoaded, .finished, .failed:
            reportLogs(attachment, epoch: epoch)
            bufferChanged()
            attachment.signal(.loaded)
        case .opened, .variantSwitched, .playlistReloaded, .retrying:
            reportLogs(attachment, epoch: epoch)
        }
    }

    /// Signals the log entries not reported yet.
    private func reportLogs(_ attachment: Attachment, epoch: UInt64) {
        guard let net = network else { return }
        let access = net.accessLog, errors = net.errorLog
        let (newAccess, newErrors) = state.withLock { s -> ([NetworkAccessLogEntry], [NetworkErrorLogEntry]) in
            guard s.epoch == epoch else { return ([], []) }
            let a = Array(access.dropFirst(s.accessReported))
            let e = Array(errors.dropFirst(s.errorsReported))
            s.accessReported = max(s.accessReported, access.count)
            s.errorsReported = max(s.errorsReported, errors.count)
            return (a, e)
        }
        for a in newAccess { attachment.signal(.accessEntry(a)) }
        for e in newErrors { attachment.signal(.errorEntry(e)) }
    }
}

/// A weak reference to an item, for event handlers made inside other handlers.
/// A weak reference to an HLS stream (a reader that, held strongly, would hold the fetching back).
private struct WeakHLSSource {
    weak var value: HLSByteSource?
    init(_ value: HLSByteSource) { self.value = value }
}

private final class WeakItem: @unchecked Sendable {
    weak var item: PlayerItem?
    init(_ item: PlayerItem?) { self.item = item }
}
