// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg
import Glibc
import Synchronization
import TonearmCore

/// What a media file holds, read from its headers alone: the counterpart of ``AudioFile``'s
/// ``AudioFile/fileFormat``, ``AudioFile/duration`` and ``AudioFile/metadata`` for a library
/// scanner, at a small fraction of the cost (no decoder is opened, nothing is decoded).
///
/// How: the demuxer is chosen from the file's first bytes (`fLaC`, `OggS`, `ID3`, an MPEG audio
/// frame, RIFF/WAVE, FORM/AIFF, `ftyp`, EBML, …) instead of running every demuxer's probe
/// (FFmpeg's normal probing is kept for anything else), reads go through a small `AVIOContext`
/// over the file, and what the header leaves out is read from the bytes by this type: FLAC's
/// STREAMINFO, an MP3's first frame header and its Xing/Info and LAME tag, Opus's pre-skip, an
/// ALAC cookie's bit depth. Only when that still leaves the sample rate, the channels or the
/// duration unknown (ADTS AAC, raw formats, CAF without a packet table) does it fall back to
/// `avformat_find_stream_info`, as ``AudioFile`` always does.
///
/// The fields are those ``AudioFile`` gives, computed the same way (the same ``SourceFormat``,
/// the same ``MetadataReader``), with one difference: the duration is what the headers state.
/// Exact (to the sample) for FLAC, WAV, AIFF, WavPack, MP4/M4A, Ogg Vorbis and Opus, and MP3
/// with a Xing/Info and LAME tag; within a packet for Matroska/WebM (millisecond timestamps);
/// estimated from the bit rate and the file size for MP3 without a Xing or VBRI frame (as other
/// tag readers do) and for ADTS. A file whose header promises more audio than it holds
/// (truncated) reports the promised length; one whose packets are damaged is not detected (it
/// is not decoded).
///
/// Errors: as ``AudioFile/init(path:)``: `fileNotFound`, `notReadable`, `isDirectory`,
/// `emptyFile`, `notMediaFile`, `noAudioTrack`, `unsupportedCodec`, `decodeFailed`, each naming
/// the file. Threading: a value; `init` may run on any thread, concurrently.
public struct MediaProbe: Sendable {
    /// The path given.
    public let path: String
    /// What the file stores: container, codec, rate, channels, bit depth, bit rate, layout.
    public let fileFormat: SourceFormat
    /// Seconds of audio as the headers state it (see the type's description); nil when nothing
    /// states it (then only decoding the file can tell: ``AudioFile``).
    public let duration: Double?
    /// Tags and cover art, as ``AudioFile/metadata``.
    public let metadata: AudioMetadata
    /// Whether the header-only path was enough (false: `avformat_find_stream_info` was needed).
    public let headerOnly: Bool

    /// Reads the file at `path`.
    public init(path: String) throws(TonearmError) {
        let (fd, size) = try AudioFile.openChecked(path)
        try self.init(path: path, file: TagFileReader(fd: fd, size: Int(size), owned: true))
    }

    /// Reads the file at `path`, already open as `fd` (not closed here) with `size` bytes, its
    /// first bytes `head` and its last bytes `tail` already read (a caller that hashed them):
    /// those are not read again.
    package init(path: String, fd: Int32, size: Int64, head: [UInt8], tail: [UInt8]) throws(TonearmError) {
        if size <= 0 { throw .emptyFile(path: path) }
        try self.init(path: path, file: TagFileReader(fd: fd, size: Int(size), owned: false, head: head, tail: tail))
    }

    /// Reads the file at `path` through FFmpeg alone, also where a native reader would read it
    /// (FLAC: ``FLACHeader``): for tests that hold the two ways side by side.
    package init(ffmpegOnlyPath path: String) throws(TonearmError) {
        let (fd, size) = try AudioFile.openChecked(path)
        try self.init(path: path, file: TagFileReader(fd: fd, size: Int(size), owned: true), native: false)
    }

    private init(path: String, file: TagFileReader, native: Bool = true) throws(TonearmError) {
        if native, let flac = FLACHeader(file) {
            // Read without FFmpeg, as FFmpeg would read it (FLACHeader).
            self.init(path: path, fileFormat: flac.sourceFormat(fileSize: file.size),
                      duration: Double(flac.totalFrames) / Double(flac.sampleRate),
                      metadata: flac.metadata(file: file), headerOnly: true)
            return
        }
        tonearm_av_log_quiet()
        let head = file.read(at: 0, count: min(file.size, Self.headSize)) ?? []
        switch ContainerSniffer.sniff(head: head, file: file) {
        case .image:
            // An image: FFmpeg would open it as a picture stream without sound.
            throw .noAudioTrack(path: path)
        case .known(let name):
            if let opened = try? Self.open(file: file, path: path, format: Self.inputFormats.named[name], head: head) {
                self = try Self.probe(opened, file: file, path: path, head: head, sniffed: true)
                return
            }
            // The bytes fooled the sniffer (or the header is damaged): let FFmpeg probe.
            fallthrough
        case .unknown:
            let opened = try Self.open(file: file, path: path, format: nil, head: head)
            self = try Self.probe(opened, file: file, path: path, head: head, sniffed: false)
        }
    }

    private init(path: String, fileFormat: SourceFormat, duration: Double?, metadata: AudioMetadata, headerOnly: Bool) {
        self.path = path
        self.fileFormat = fileFormat
        self.duration = duration
        self.metadata = metadata
        self.headerOnly = headerOnly
    }

    /// Bytes read at once from the start (sniffing, and the text check of a failed open).
    static let headSize = 4096
    /// The custom I/O buffer: small, because headers are small (large reads bypass it).
    static let ioBufferSize: Int32 = 4096

    /// The demuxers the sniffer names, looked up once (FFmpeg searches its list by name).
    private struct InputFormats: @unchecked Sendable {
        let named: [String: UnsafePointer<AVInputFormat>]
    }
    private static let inputFormats = InputFormats(named: Dictionary(uniqueKeysWithValues: ContainerSniffer.demuxers.compactMap { name in
        av_find_input_format(name).map { (name, $0) }
    }))

    /// An opened demuxer with its I/O; closes both when released.
    private final class Opened {
        var ctx: UnsafeMutablePointer<AVFormatContext>?
        let io: AVIOBridge
        init(ctx: UnsafeMutablePointer<AVFormatContext>, io: AVIOBridge) { self.ctx = ctx; self.io = io }
        deinit {
            avformat_close_input(&ctx)
            io.close()
        }
    }

    /// Opens the demuxer (`format`, or FFmpeg's probing when nil) over the file; errors as ``AudioFile``.
    private static func open(file: TagFileReader, path: String, format: UnsafePointer<AVInputFormat>?,
                             head: [UInt8]) throws(TonearmError) -> Opened {
        guard let io = AVIOBridge(reader: AVIOFileReader(file: file), bufferSize: ioBufferSize), let ctx = avformat_alloc_context() else {
            throw .decodeFailed(path: path, detail: "out of memory")
        }
        ctx.pointee.pb = io.context
        ctx.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
        var opt: UnsafeMutablePointer<AVFormatContext>? = ctx
        InputOpenCounter.noteOpen(path)
        let r = avformat_open_input(&opt, path, format, nil)
        if r < 0 {
            // avformat_open_input freed the context; not the custom I/O.
            io.close()
            if r == tonearm_averror(EACCES) { throw .notReadable(path: path, reason: "permission denied") }
            throw .notMediaFile(path: path, detail: AudioFile.openFailure(r, head: head))
        }
        return Opened(ctx: opt!, io: io)
    }

    /// Reads what `opened` holds. `sniffed`: the demuxer was chosen from the bytes (FFmpeg's
    /// probe score, which tells a weak guess, is then not set).
    private static func probe(_ opened: Opened, file: TagFileReader, path: String, head: [UInt8],
                              sniffed: Bool) throws(TonearmError) -> MediaProbe {
        let ctx = opened.ctx!
        let formatName = String(cString: ctx.pointee.iformat.pointee.name)
        if formatName == "tty" { throw .notMediaFile(path: path, detail: "the content looks like text") }
        var headerOnly = true
        // The headers' missing parameters first: FFmpeg's choice of the best stream skips
        // audio streams whose rate or channels are unknown.
        let mp3 = formatName == "mp3" ? MP3Info.read(file) : nil
        for i in 0..<Int(ctx.pointee.nb_streams) where ctx.pointee.streams[i]!.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_AUDIO {
            HeaderFields.fill(ctx, stream: ctx.pointee.streams[i]!, mp3: mp3)
        }
        var (streamIndex, hasDecoder) = audioStream(ctx)
        var stream = streamIndex.map { ctx.pointee.streams[Int($0)]! }
        var length = stream.flatMap { HeaderFields.length(ctx, stream: $0, file: file, mp3: mp3) }
        let complete = stream.map { s in
            let par = s.pointee.codecpar!
            return par.pointee.codec_id != AV_CODEC_ID_NONE && par.pointee.sample_rate > 0
                && par.pointee.ch_layout.nb_channels > 0 && (length ?? 0) > 0
        } ?? false
        if !complete && (stream != nil || ctx.pointee.ctx_flags & AVFMTCTX_NOHEADER != 0 || ctx.pointee.nb_streams == 0) {
            // What the headers leave unknown, FFmpeg finds by reading (and decoding) packets.
            headerOnly = false
            InputOpenCounter.noteProbe(path)
            let r = avformat_find_stream_info(ctx, nil)
            if r < 0 { throw .notMediaFile(path: path, detail: AudioFile.openFailure(r, head: head)) }
            (streamIndex, hasDecoder) = audioStream(ctx)
            stream = streamIndex.map { ctx.pointee.streams[Int($0)]! }
            if let s = stream, length == nil || length! <= 0 {
                // A length FFmpeg estimated from the bit rate is exact only at a constant rate (PCM);
                // for others (ADTS AAC) only decoding tells.
                let pcm = String(cString: avcodec_get_name(s.pointee.codecpar.pointee.codec_id)).hasPrefix("pcm_")
                if pcm || ctx.pointee.duration_estimation_method != AVFMT_DURATION_FROM_BITRATE {
                    length = HeaderFields.statedLength(ctx, stream: s)
                }
            }
        }
        guard let stream, let streamIndex else {
            if !sniffed && AudioFile.isWeakGuess(ctx) { throw AudioFile.noAudioInWeakGuess(path: path, head: head) }
            throw .noAudioTrack(path: path)
        }
        // The checks FFmpegDecoder makes before decoding.
        let par = stream.pointee.codecpar!
        let codecName = String(cString: avcodec_get_name(par.pointee.codec_id))
        guard hasDecoder || avcodec_find_decoder(par.pointee.codec_id) != nil else {
            throw .unsupportedCodec(path: path, codec: codecName)
        }
        let rate = par.pointee.sample_rate, channels = Int(par.pointee.ch_layout.nb_channels)
        guard rate > 0, (1...64).contains(channels) else {
            throw .decodeFailed(path: path, detail: "invalid audio parameters (\(rate) Hz, \(channels) channels)")
        }
        if par.pointee.ch_layout.order == AV_CHANNEL_ORDER_UNSPEC && !codecName.hasPrefix("pcm_") {
            // As a decoder reports it (FFmpeg's PCM decoders leave it unspecified).
            av_channel_layout_uninit(&par.pointee.ch_layout)
            av_channel_layout_default(&par.pointee.ch_layout, Int32(channels))
        }
        HeaderFields.fillBitRate(ctx, file: file)
        let format = AudioFile.sourceFormat(ctx, stream: stream, path: path)
        let metadata = MetadataReader.read(formatContext: ctx, audioStreamIndex: streamIndex, file: file)
        let duration = length.flatMap { $0 > 0 ? Double($0) / Double(rate) : nil }
        return MediaProbe(path: path, fileFormat: format, duration: duration, metadata: metadata, headerOnly: headerOnly)
    }

    /// The audio stream ``AudioFile`` would decode: the best one with a decoder, else the first
    /// (then without a decoder).
    private static func audioStream(_ ctx: UnsafeMutablePointer<AVFormatContext>) -> (Int32?, hasDecoder: Bool) {
        // FFmpeg looks a decoder up by walking its list of codecs: remembered per codec here.
        let first = av_find_best_stream(ctx, AVMEDIA_TYPE_AUDIO, -1, -1, nil, 0)
        if first >= 0, hasDecoder(ctx.pointee.streams[Int(first)]!.pointee.codecpar.pointee.codec_id) { return (first, true) }
        var decoder: UnsafePointer<AVCodec>?
        let best = av_find_best_stream(ctx, AVMEDIA_TYPE_AUDIO, -1, -1, &decoder, 0)
        if best >= 0 { return (best, true) }
        for i in 0..<Int(ctx.pointee.nb_streams)
        where ctx.pointee.streams[i]!.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_AUDIO {
            return (Int32(i), false)
        }
        return (nil, false)
    }

    private static let decoders = Mutex<[UInt32: Bool]>([:])

    /// Whether FFmpeg has a decoder for `codec`.
    private static func hasDecoder(_ codec: AVCodecID) -> Bool {
        if let known = decoders.withLock({ $0[codec.rawValue] }) { return known }
        let found = avcodec_find_decoder(codec) != nil
        decoders.withLock { $0[codec.rawValue] = found }
        return found
    }
}
