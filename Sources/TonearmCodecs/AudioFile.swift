// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg
import Foundation
import TonearmCore

/// An audio file (or the audio track of a video) opened for reading: the counterpart of
/// `AVAudioFile`. Any container and codec FFmpeg decodes is accepted; audio is handed out as
/// Float32 at the file's own sample rate and channel count (``processingFormat``), with encoder
/// delay and padding removed, so ``length`` is exactly the number of frames the encoder was given.
///
/// Seeking is sample-accurate for every format (VBR MP3 included): after `framePosition = n`, the
/// next read returns exactly the samples a straight read from the start returns at frame `n`.
/// Decoders whose state a seek cannot rebuild exactly (AAC, whose PNS noise generator runs on
/// from the start; Opus with SILK, whose float state never converges) are restarted with a short
/// preroll at fixed segment boundaries on straight reads too (every 256 AAC packets, every 20 s of
/// Opus), so seeks give the same bits; such reads differ from a continuous decode only in PNS
/// noise bands and by SILK's float noise (below 1e-5).
///
/// Errors: opening throws ``TonearmError`` naming the file (`fileNotFound`, `notReadable`,
/// `isDirectory`, `emptyFile`, `notMediaFile`, `noAudioTrack`, `unsupportedCodec`,
/// `decodeFailed`). A file whose content does not match its extension opens, with an
/// ``AudioWarning/extensionMismatch(path:extension:actualFormat:)`` in ``warnings``. Corrupt or
/// truncated data never throws from a read: bad packets are skipped and reported through
/// ``takeWarnings()``; reads throw only when decoding cannot go on at all.
///
/// Threading: every method may be called from any thread; an internal lock serialises them (a
/// playback decoder thread owns the file while playing; others may still ask for its position).
/// ``takeWarnings()`` never waits for a read in progress.
public final class AudioFile: @unchecked Sendable {
    /// The file's URL (`file://`); for in-memory data, a URL made from the name hint.
    public let url: URL
    /// The path used in messages (the name hint, or `<memory>`, for in-memory data).
    public let path: String
    /// What the file stores: container, codec, rate, channels, bit depth, bit rate, layout.
    public let fileFormat: SourceFormat
    /// The format reads deliver: Float32, non-interleaved, the file's own rate and channels.
    public let processingFormat: AudioFormat
    /// Frames in the file, exactly (after removing encoder delay and padding).
    public let length: AudioFramePosition
    /// Problems found when opening that did not stop it (extension mismatch, truncation).
    public let warnings: [AudioWarning]
    /// Tags and cover art.
    public internal(set) var metadata = AudioMetadata()

    /// The in-memory bytes, for ``init(data:nameHint:)``.
    internal let data: [UInt8]?
    /// FFmpeg's decoder, or the FLAC one for a local `.flac` file (`AudioFile+FLAC.swift`).
    let decoder: any AudioFileDecoder
    private let lock = NSLock()

    /// The opened demuxer (for the metadata reader). Use only while holding no expectations of
    /// its read position: reading packets from it disturbs decoding.
    package var formatContext: UnsafeMutablePointer<AVFormatContext> { (innermostDecoder as! FFmpegDecoder).fmt! }
    /// The demuxer's context when FFmpeg reads the file (nil for a FLAC file read natively).
    package var openedFormatContext: UnsafeMutablePointer<AVFormatContext>? { (innermostDecoder as? FFmpegDecoder)?.fmt }
    /// The decoder that reads the file (under a part's ``SectionDecoder``).
    var innermostDecoder: any AudioFileDecoder { (decoder as? SectionDecoder)?.base ?? decoder }

    /// Where the stream's own clock stands at the first sample: its timestamp in frames at the
    /// source's rate, and the container's start time in seconds (the earliest of its streams;
    /// FFmpeg's `start_time`). A stream that goes on in another file — an HLS segment opened
    /// after the first — is placed on the first one's timeline by these, not by what its
    /// playlist states (see `HLSPlayback`). Nil parts: not known (the FLAC decoder; no
    /// timestamps).
    package var timestampOrigin: TimestampOrigin {
        guard let d = innermostDecoder as? FFmpegDecoder else { return TimestampOrigin(firstSample: nil, containerStart: nil) }
        let start = d.fmt.map { $0.pointee.start_time }
        let container = start.flatMap { $0 == tonearm_av_nopts_value() ? nil : Double($0) / Double(tonearm_av_time_base()) }
        return TimestampOrigin(firstSample: d.startTs, containerStart: container)
    }

    /// The number of the stream decoded, as `tonearm info` lists a file's tracks (FFmpeg's
    /// stream index).
    public var audioTrack: Int { Int(decoder.streamIndex) }

    /// Whether ``length`` is known (false only for a stream opened with `streaming` whose
    /// container states no length: an endless radio stream, say).
    public var isLengthKnown: Bool { length != .max }

    /// Seconds of audio: `length / sampleRate`.
    public var duration: Double { Double(length) / processingFormat.sampleRate }

    /// The frame the next read starts at. Setting it seeks (sample-accurately); a failed seek
    /// leaves the position unspecified and is reported by the next read. Use ``seek(toFrame:)``
    /// to get the error.
    public var framePosition: AudioFramePosition {
        get { lock.lock(); defer { lock.unlock() }; return decoder.pos }
        set { try? seek(toFrame: newValue) }
    }

    /// Opens the file at a `file://` URL.
    public convenience init(forReading url: URL) throws(TonearmError) {
        guard url.isFileURL else { throw .invalidURL(url.absoluteString) }
        try self.init(path: url.path)
    }

    /// Opens the file at `path`, decoding its best audio stream.
    public convenience init(path: String) throws(TonearmError) {
        try self.init(path: path, audioStream: nil)
    }

    /// Opens the file at `path`, decoding the audio stream at index `audioStream` (a stream number
    /// as `tonearm info` lists them; nil: the best audio stream). Throws `noSuchTrack` when that
    /// stream does not exist or is not audio, and the errors of ``init(path:)``.
    public convenience init(path: String, audioStream: Int?) throws(TonearmError) {
        try self.init(path: path, audioStream: audioStream, native: true)
    }

    /// As ``init(path:audioStream:)``; `native`: whether a FLAC file may be read without FFmpeg.
    init(path: String, audioStream: Int?, native: Bool) throws(TonearmError) {
        self.path = path
        url = URL(fileURLWithPath: path)
        data = nil
        try Self.checkFile(path)
        if native, audioStream ?? 0 == 0, let flac = Self.openFLAC(path: path) {
            decoder = flac.decoder
            (fileFormat, processingFormat, length, warnings) = (flac.format, flac.processingFormat, flac.length, flac.warnings)
            metadata = flac.metadata
            return
        }
        tonearm_av_log_quiet()
        let head = Self.head(path: path)
        var ctx: UnsafeMutablePointer<AVFormatContext>?
        let io: AVIOBridge?
        // The file just probed for its streams (`tonearm play VIDEO` asking whether it has
        // video) is taken as it is, not opened and probed again.
        let kept = ProbedInputs.take(path: path)
        if let kept {
            ctx = kept.context
            io = kept.io as? AVIOBridge
        } else {
            // An MP3 (or ADTS) file followed by an APE tag is read through our own I/O, which ends
            // the file before the tag: FFmpeg would decode the tag as audio.
            let (r, opened) = InputOpening.open(&ctx, path: path, head: head)
            io = opened as? AVIOBridge
            if r < 0 {
                if r == tonearm_averror(EACCES) { throw .notReadable(path: path, reason: "permission denied") }
                throw .notMediaFile(path: path, detail: Self.openFailure(r, head: head))
            }
        }
        if let audioStream {
            let fc = ctx!
            let count = Int(fc.pointee.nb_streams)
            if audioStream < 0 || audioStream >= count
                || fc.pointee.streams[audioStream]!.pointee.codecpar.pointee.codec_type != AVMEDIA_TYPE_AUDIO {
                avformat_close_input(&ctx)
                throw .noSuchTrack(path: path, track: audioStream,
                                   detail: audioStream >= 0 && audioStream < count ? "it is not an audio track" : "the file has \(count) tracks")
            }
        }
        let ffmpeg = try Self.makeDecoder(ctx!, name: path, io: io, head: head,
                                          audioStream: Int32(audioStream ?? -1), probed: kept != nil)
        decoder = ffmpeg
        (fileFormat, processingFormat, length) = Self.describe(ffmpeg, path: path)
        warnings = Self.extensionCheck(path: path, decoder: ffmpeg) + ffmpeg.takeWarnings()
        metadata = MetadataReader.read(formatContext: formatContext, path: path, data: nil)  // METADATA HOOK
    }

    /// A part of `whole` read through `decoder` (``init(section:of:)``): the same file, `length` frames.
    init(part whole: AudioFile, decoder: any AudioFileDecoder, length: AudioFramePosition) {
        url = whole.url
        path = whole.path
        fileFormat = whole.fileFormat
        processingFormat = whole.processingFormat
        warnings = whole.warnings
        metadata = whole.metadata
        data = whole.data
        self.decoder = decoder
        self.length = length
    }

    /// Opens audio held in memory (decoded through a custom AVIOContext). `nameHint` names it in
    /// messages and its extension is checked against the content.
    public init(data: [UInt8], nameHint: String? = nil) throws(TonearmError) {
        tonearm_av_log_quiet()
        let name = nameHint ?? "<memory>"
        path = name
        url = URL(fileURLWithPath: name)
        self.data = data
        if data.isEmpty { throw .emptyFile(path: name) }
        // As for a file: an MP3 ends before an APE tag after it.
        let end = ContainerSniffer.audioEnd(head: Array(data.prefix(4096)), file: TagMemorySource(bytes: data))
        guard let io = AVIOBridge(reader: AVIOMemoryReader(bytes: data, end: end), bufferSize: 32 * 1024),
              var ctx = avformat_alloc_context() else {
            throw .decodeFailed(path: name, detail: "out of memory")
        }
        ctx.pointee.pb = io.context
        ctx.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
        var opt: UnsafeMutablePointer<AVFormatContext>? = ctx
        let r = avformat_open_input(&opt, name, nil, nil)
        if r < 0 { throw .notMediaFile(path: name, detail: Self.openFailure(r, head: Array(data.prefix(4096)))) }
        ctx = opt!
        let ffmpeg = try Self.makeDecoder(ctx, name: name, io: io, head: Array(data.prefix(4096)))
        decoder = ffmpeg
        (fileFormat, processingFormat, length) = Self.describe(ffmpeg, path: name)
        warnings = (nameHint == nil ? [] : Self.extensionCheck(path: name, decoder: ffmpeg)) + ffmpeg.takeWarnings()
        metadata = MetadataReader.read(formatContext: formatContext, path: path, data: data)  // METADATA HOOK
    }

    /// Opens audio read from `source` (a network stream, say) through a custom AVIOContext;
    /// `name` (the URL) names it in messages. A failure of the source is thrown as it is
    /// (``TonearmError/network(url:failure:)``), not as "not a media file".
    ///
    /// Without `streaming`, it is opened as a file is: formats without exact timestamps (MP3,
    /// ADTS, Ogg) are scanned to the end at open (the whole body arrives first), and seeks are
    /// sample-exact. With `streaming` (the default for a source of unknown length: radio), only
    /// the start is read: ``length`` is what the container states, or `Int64.max` when it states
    /// nothing (``isLengthKnown`` is false), reads go on as long as bytes come, and seeks are the
    /// demuxer's own, not sample-exact.
    public init(byteSource source: any ByteSource, name: String, streaming: Bool? = nil) throws(TonearmError) {
        tonearm_av_log_quiet()
        path = name
        url = URL(string: name) ?? URL(fileURLWithPath: name)
        data = nil
        let reader = AVIOByteSourceReader(source: source, end: Self.audioEnd(of: source))
        guard let io = AVIOBridge(reader: reader, bufferSize: 64 * 1024), var ctx = avformat_alloc_context() else {
            throw .decodeFailed(path: name, detail: "out of memory")
        }
        ctx.pointee.pb = io.context
        ctx.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
        if streaming == true {
            // Start playing after a little of the stream, not after FFmpeg's default 5 MB or
            // 5 s of analysis: over a radio connection those take seconds to arrive.
            ctx.pointee.probesize = 64 * 1024
            ctx.pointee.max_analyze_duration = Int64(AV_TIME_BASE / 2)
        }
        var opt: UnsafeMutablePointer<AVFormatContext>? = ctx
        // Bytes from elsewhere may name other resources (a playlist demuxer, `concat`): FFmpeg
        // must open none of them itself — no protocol is allowed (the name matches none).
        var options: OpaquePointer?
        av_dict_set(&options, "protocol_whitelist", "tonearm-none", 0)
        let r = avformat_open_input(&opt, nil, nil, &options)
        av_dict_free(&options)
        if r < 0 {
            if let f = reader.failure { throw f }
            throw .notMediaFile(path: name, detail: Self.openFailure(r, head: []))
        }
        ctx = opt!
        if streaming == true, (0..<Int(ctx.pointee.nb_streams)).contains(where: {
            ctx.pointee.streams[$0]?.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_VIDEO
        }) {
            // A stream with a picture (an HLS or MPEG-TS video): its first sound can come after
            // far more than 64 kB of video (a 3 Mb/s picture, the muxer's interleaving delay);
            // FFmpeg's defaults let the analysis reach it (it stops once every stream is known).
            ctx.pointee.probesize = 5 << 20
            ctx.pointee.max_analyze_duration = Int64(5 * AV_TIME_BASE)
        }
        let ffmpeg: FFmpegDecoder
        do {
            // Decided after the open: by then the source knows whether it has a length.
            ffmpeg = try Self.makeDecoder(ctx, name: name, io: io, head: [],
                                          streaming: streaming ?? (source.length == nil))
        } catch {
            if let f = reader.failure { throw f }
            throw error
        }
        if let f = reader.failure { throw f }
        decoder = ffmpeg
        (fileFormat, processingFormat, length) = Self.describe(ffmpeg, path: name)
        warnings = ffmpeg.takeWarnings()
        metadata = MetadataReader.read(formatContext: formatContext, path: path, data: nil)
    }

    /// Where the audio of `source` ends when an APE tag follows it (as for a file:
    /// ``ContainerSniffer/audioEnd(head:file:)``), found before it is demuxed: its first bytes are
    /// read, and for MPEG audio or ADTS its last 4 kB (``ByteSource/readTail(_:)``: over HTTP,
    /// when the length is known and the server accepts ranges, one ranged request of its own,
    /// not the whole body). Nil when nothing is cut; the source is back at its start either way
    /// (every source keeps at least its last megabyte read).
    private static func audioEnd(of source: any ByteSource) -> Int64? {
        defer { _ = source.seek(to: 0) }
        // The first bytes: by then the source knows its length and whether it can seek.
        var head = [UInt8](repeating: 0, count: 4096)
        var got = 0
        while got < head.count {
            let n = head.withUnsafeMutableBytes { all -> Int in
                (try? source.read(into: UnsafeMutableRawBufferPointer(rebasing: all[got...]))) ?? 0
            }
            if n <= 0 { break }
            got += n
        }
        head.removeSubrange(got...)
        guard let length = source.length, length <= Int64(Int.max) else { return nil }
        var file = TagByteSourceReader(source: source, size: Int(length), head: head, tail: [])
        switch ContainerSniffer.sniff(head: head, file: file) {
        case .known("mp3"), .known("aac"): break
        default: return nil
        }
        if length > Int64(head.count) {
            guard let tail = source.readTail(4096) else { return nil }
            file = TagByteSourceReader(source: source, size: Int(length), head: head, tail: tail)
        }
        return ContainerSniffer.audioEnd(head: head, file: file).map(Int64.init)
    }

    // MARK: Reading

    /// Moves the read position to `frame` (0...length), sample-accurately.
    /// Throws `invalidArgument` for a frame outside the file, `decodeFailed` if the stream cannot be positioned.
    public func seek(toFrame frame: AudioFramePosition) throws(TonearmError) {
        guard frame >= 0 && frame <= length else {
            throw .invalidArgument("\(path): frame \(frame) is outside 0...\(length)")
        }
        lock.lock(); defer { lock.unlock() }
        try decoder.seek(to: frame)
    }

    /// Reads frames into `buffer` from ``framePosition``: up to `frameCount` (or the buffer's
    /// capacity), sets `buffer.frameLength` to the frames read (0 at the end of the file) and
    /// advances the position. Throws `invalidArgument` when the buffer's channel count differs
    /// from the file's, `decodeFailed` when decoding cannot go on.
    public func read(into buffer: AudioPCMBuffer, frameCount: AudioFrameCount? = nil) throws(TonearmError) {
        guard buffer.channelCount == processingFormat.channelCount else {
            throw .invalidArgument("\(path): buffer has \(buffer.channelCount) channels, the file \(processingFormat.channelCount)")
        }
        let want = min(frameCount ?? buffer.frameCapacity, buffer.frameCapacity)
        lock.lock(); defer { lock.unlock() }
        buffer.frameLength = try decoder.read(into: buffer.floatChannelData, offset: 0, count: max(0, want))
    }

    /// Reads up to `frameCount` frames as interleaved Float32 into `buffer` (which must hold
    /// `frameCount * channelCount` floats); returns frames read, 0 at the end. Allocates nothing
    /// in the steady state: the playback decoder thread calls it.
    public func readInterleaved(into buffer: UnsafeMutablePointer<Float>, frameCount: Int) throws(TonearmError) -> Int {
        lock.lock(); defer { lock.unlock() }
        return try decoder.readInterleaved(into: buffer, count: max(0, frameCount))
    }

    /// Warnings found while decoding (corrupt packets skipped, truncation) since the last call.
    public func takeWarnings() -> [AudioWarning] { decoder.takeWarnings() }

    // MARK: Opening helpers

    private static func checkFile(_ path: String) throws(TonearmError) {
        close(try openChecked(path).fd)
    }

    /// Opens `path` read-only after the checks every opening makes: it exists (`fileNotFound`),
    /// is no folder (`isDirectory`), can be read (`notReadable`) and, when a regular file, is not
    /// empty (`emptyFile`). Returns the descriptor (the caller closes it) and the size.
    static func openChecked(_ path: String) throws(TonearmError) -> (fd: Int32, size: Int64) {
        var st = stat()
        if stat(path, &st) != 0 {
            if errno == EACCES { throw .notReadable(path: path, reason: String(cString: strerror(errno))) }
            throw .fileNotFound(path: path)
        }
        if (st.st_mode & S_IFMT) == S_IFDIR { throw .isDirectory(path: path) }
        if access(path, R_OK) != 0 { throw .notReadable(path: path, reason: String(cString: strerror(errno))) }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 { throw .notReadable(path: path, reason: String(cString: strerror(errno))) }
        if (st.st_mode & S_IFMT) == S_IFREG && st.st_size == 0 { close(fd); throw .emptyFile(path: path) }
        return (fd, Int64(st.st_size))
    }

    /// The first bytes of a file (empty if it cannot be read).
    private static func head(path: String) -> [UInt8] {
        guard let h = FileHandle(forReadingAtPath: path) else { return [] }
        defer { try? h.close() }
        return (try? h.read(upToCount: 4096)).map { [UInt8]($0) } ?? []
    }

    /// What to say when FFmpeg cannot open the bytes as media.
    static func openFailure(_ code: Int32, head: [UInt8]) -> String {
        if looksLikeText(head) { return "the content looks like text" }
        if [tonearm_averror_invaliddata(), tonearm_averror(EINVAL), tonearm_averror(ENOSYS), tonearm_averror_eof()].contains(code) {
            return "FFmpeg found no known container format"
        }
        return FFmpegDecoder.errorString(code)
    }

    /// True when the bytes are UTF-8 (or UTF-16 with a byte order mark) text without control
    /// characters other than tab, newlines and form feed.
    static func looksLikeText(_ bytes: [UInt8]) -> Bool {
        if bytes.isEmpty { return false }
        if bytes.count >= 2 && (bytes[0] == 0xFF && bytes[1] == 0xFE || bytes[0] == 0xFE && bytes[1] == 0xFF) {
            return bytes.count % 2 == 0 || bytes.count == 4096
        }
        var body = bytes[...]
        if body.count == 4096 {
            // Do not judge a UTF-8 sequence cut at the end of the sample.
            var cut = 0
            while cut < 3, let last = body.last, last & 0xC0 == 0x80 || last >= 0xC0 { body = body.dropLast(); cut += 1 }
        }
        if body.contains(where: { $0 < 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D && $0 != 0x0C || $0 == 0x7F }) {
            return false
        }
        return String(validating: body, as: UTF8.self) != nil
    }

    private static func makeDecoder(_ ctx: UnsafeMutablePointer<AVFormatContext>, name: String,
                                    io: AVIOBridge?, head: [UInt8],
                                    streaming: Bool = false, audioStream: Int32 = -1,
                                    probed: Bool = false) throws(TonearmError) -> FFmpegDecoder {
        var ctx: UnsafeMutablePointer<AVFormatContext>? = ctx
        let formatName = String(cString: ctx!.pointee.iformat.pointee.name)
        if formatName == "tty" {
            avformat_close_input(&ctx)
            throw .notMediaFile(path: name, detail: "the content looks like text")
        }
        if !probed {  // `probed`: the stream info was read already (``ProbedInputs``)
            InputOpenCounter.noteProbe(name)
            let r = avformat_find_stream_info(ctx, nil)
            if r < 0 {
                avformat_close_input(&ctx)
                throw .notMediaFile(path: name, detail: openFailure(r, head: head))
            }
        }
        let weakGuess = isWeakGuess(ctx!)
        // The decoder owns the context from here and closes it on failure.
        do {
            return try FFmpegDecoder(name: name, fmt: ctx!, io: io, streaming: streaming,
                                     audioStream: audioStream)
        } catch .noAudioTrack(let p) where weakGuess {
            throw noAudioInWeakGuess(path: p, head: head)
        }
    }

    /// Whether the demuxer guessed from weak evidence (random bytes, text): then finding no
    /// audio means not a media file rather than a media file without sound. The text-art
    /// demuxers (ANSI/BIN/XBIN/ADF/IDF) accept any bytes by the file extension.
    static func isWeakGuess(_ ctx: UnsafeMutablePointer<AVFormatContext>) -> Bool {
        let formatName = String(cString: ctx.pointee.iformat.pointee.name)
        return ctx.pointee.probe_score <= 25 || ["tty", "bin", "xbin", "adf", "idf"].contains(formatName)
    }

    /// The error for a weak guess without audio (see ``isWeakGuess(_:)``).
    static func noAudioInWeakGuess(path: String, head: [UInt8]) -> TonearmError {
        .notMediaFile(path: path, detail: looksLikeText(head) ? "the content looks like text" : "FFmpeg found no known container format")
    }

    private static func describe(_ d: FFmpegDecoder, path: String) -> (SourceFormat, AudioFormat, AudioFramePosition) {
        let source = sourceFormat(d.fmt!, stream: d.stream, path: path)
        let layout = AudioChannelLayout(ffmpeg: d.stream.pointee.codecpar.pointee.ch_layout)
        return (source, AudioFormat(sampleRate: Double(d.sampleRate), channelCount: d.channels, channelLayout: layout),
                d.length)
    }

    /// What the file stores, from the demuxer and the audio stream's codec parameters (filled by
    /// `avformat_find_stream_info`, or by ``MediaProbe`` from the headers).
    static func sourceFormat(_ fmt: UnsafeMutablePointer<AVFormatContext>, stream: UnsafeMutablePointer<AVStream>,
                             path: String) -> SourceFormat {
        let par = stream.pointee.codecpar!
        let channels = Int(par.pointee.ch_layout.nb_channels)
        let formatName = String(cString: fmt.pointee.iformat.pointee.name)
        var layout = par.pointee.ch_layout
        var buf = [CChar](repeating: 0, count: 128)
        var described = av_channel_layout_describe(&layout, &buf, 128) >= 0 ? stringFromCBuffer(buf) : "\(channels) channels"
        if layout.order == AV_CHANNEL_ORDER_UNSPEC, channels > 0 {
            // No layout in the file (a WAV without a channel mask): it plays as FFmpeg's default
            // for the count (what the decoder's processing format carries) — say which.
            var standard = AVChannelLayout()
            av_channel_layout_default(&standard, Int32(channels))
            if standard.order == AV_CHANNEL_ORDER_NATIVE, av_channel_layout_describe(&standard, &buf, 128) >= 0 {
                let name = stringFromCBuffer(buf)
                described = channels <= 2 ? name : "\(channels) channels (played as \(name))"
            }
            av_channel_layout_uninit(&standard)
        }
        let codecName = String(cString: avcodec_get_name(par.pointee.codec_id))
        let lossless = codecName.hasPrefix("pcm_") || ["flac", "alac", "wavpack", "tta", "ape", "mlp", "truehd"].contains(codecName)
        var bits: Int?
        if lossless {
            let raw = Int(par.pointee.bits_per_raw_sample), coded = Int(par.pointee.bits_per_coded_sample)
            bits = raw > 0 ? raw : coded > 0 ? coded : nil
        }
        var rate = Int(par.pointee.bit_rate)
        // A Vorbis header without a nominal rate (libvorbis at 96 kHz) says -1, which FFmpeg
        // reads as 4,294,967,295 b/s: no rate stated.
        if rate >= Int(UInt32.max) { rate = 0 }
        // The container's rate is the stream's when it is the only one (cover pictures aside).
        let streams = (0..<Int(fmt.pointee.nb_streams)).filter {
            fmt.pointee.streams[$0]!.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC == 0
        }.count
        if rate <= 0 && streams == 1 { rate = Int(fmt.pointee.bit_rate) }
        return SourceFormat(
            containerName: containerName(formatName, fmt: fmt, path: path), formatName: formatName,
            codecName: codecName, sampleRate: Int(par.pointee.sample_rate), channelCount: channels,
            bitsPerSample: bits, bitRate: rate > 0 ? rate : nil, channelLayout: described)
    }

    /// A readable name for FFmpeg's demuxer name.
    static func containerName(_ name: String, fmt: UnsafeMutablePointer<AVFormatContext>, path: String) -> String {
        switch name {
        case "wav": return "WAV"
        case "w64": return "Wave64"
        case "mp3": return "MP3"
        case "flac": return "FLAC"
        case "ogg": return "Ogg"
        case "aac": return "ADTS"
        case "caf": return "CAF"
        case "aiff": return "AIFF"
        case "matroska,webm":
            if let e = av_dict_get(fmt.pointee.metadata, "DOCTYPE", nil, 0), String(cString: e.pointee.value) == "webm" { return "WebM" }
            return (path as NSString).pathExtension.lowercased() == "webm" ? "WebM" : "Matroska"
        case let n where n.hasPrefix("mov,"):
            if let e = av_dict_get(fmt.pointee.metadata, "major_brand", nil, 0) {
                let brand = String(cString: e.pointee.value).trimmingCharacters(in: .whitespaces)
                if brand == "qt" { return "QuickTime" }
                if brand.hasPrefix("M4A") { return "M4A" }
            }
            return "MP4"
        default:
            return name.split(separator: ",").first.map { $0.uppercased() } ?? name
        }
    }

    /// Extensions that name a media format: the ones we check against the content.
    private static let knownExtensions: [String: [String]] = [
        "wav": ["wav"], "wave": ["wav"], "w64": ["w64"], "rf64": ["wav"], "mp3": ["mp3"], "flac": ["flac"],
        "ogg": ["ogg"], "oga": ["ogg"], "opus": ["ogg"], "m4a": ["mov"], "m4b": ["mov"], "mp4": ["mov"],
        "m4v": ["mov"], "mov": ["mov"], "aac": ["aac", "mov"], "caf": ["caf"], "aif": ["aiff"], "aiff": ["aiff"],
        "aifc": ["aiff"], "mkv": ["matroska"], "mka": ["matroska"], "webm": ["matroska"], "wma": ["asf"],
        "wv": ["wv"], "ape": ["ape"], "ac3": ["ac3"], "dts": ["dts"], "mp2": ["mp3"], "amr": ["amr"],
    ]

    private static func extensionCheck(path: String, decoder: FFmpegDecoder) -> [AudioWarning] {
        let ext = (path as NSString).pathExtension.lowercased()
        guard let expected = knownExtensions[ext], let fmt = decoder.fmt else { return [] }
        let name = String(cString: fmt.pointee.iformat.pointee.name)
        let demuxerFamily = name.split(separator: ",").first.map(String.init) ?? name
        if expected.contains(where: { demuxerFamily.hasPrefix($0) }) { return [] }
        let actual = containerName(name, fmt: fmt, path: "")
        return [.extensionMismatch(path: path, extension: ext, actualFormat: actual)]
    }
}

/// Where a stream's own clock stands at its first sample (``AudioFile/timestampOrigin``): the
/// sound's first timestamp in frames at the source's rate, and the container's start in seconds.
/// The first stream of an HLS item states its timeline's origin with it, for the sound (a later
/// segment's first sample against `firstSample`) and the picture (`containerStart`) alike.
package struct TimestampOrigin: Sendable, Hashable {
    package var firstSample: Int64?
    package var containerStart: Double?
    package init(firstSample: Int64?, containerStart: Double?) {
        self.firstSample = firstSample
        self.containerStart = containerStart
    }
}
