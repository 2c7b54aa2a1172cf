// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import TonearmCore

/// Exports the audio of an ``Asset`` to a file (the counterpart of `AVAssetExportSession`):
/// unchanged (``ExportPreset/passthrough``: extracting the sound of a video without re-encoding)
/// or re-encoded by a preset, whole or trimmed to ``timeRange``, with the asset's tags and cover
/// carried over.
///
/// Set ``outputURL`` (and optionally ``outputFileType``, else the URL's extension decides),
/// then `try await export()`. Progress arrives on ``progressUpdates()``; ``cancelExport()``
/// stops it from any thread. The output is written to a hidden temporary file beside the target
/// and renamed into place at the end: a failed or cancelled export leaves nothing behind, and an
/// existing file is replaced only when ``overwritesExistingFile`` is set.
///
/// Threading: every member may be used from any thread or task; the settings are read once when
/// `export()` starts. A session exports once.
public final class AssetExportSession: Sendable {
    /// The settings an export reads when it starts.
    struct Settings: Sendable {
        var outputURL: URL?
        var outputFileType: ExportFileType?
        var timeRange: AssetTimeRange?
        var metadata: AudioMetadata?
        var audioTrackID: Int?
        var overwritesExistingFile = false
        var includesArtwork = true
    }

    private struct State {
        var machine = ExportStateMachine()
        var subscribers: [UUID: AsyncStream<Double>.Continuation] = [:]
    }

    /// The asset exported (nil for a composition).
    public let asset: Asset?
    /// The composition exported (nil for an asset).
    public let composition: Composition?
    public let presetName: ExportPreset
    private let settings = Mutex(Settings())
    private let state = Mutex(State())
    private let cancelFlag = CancelFlag()

    /// A session exporting `asset` with `presetName`. Nothing is read until `export()` or
    /// ``compatibleFileTypes()``.
    public init(asset: Asset, presetName: ExportPreset) {
        self.asset = asset
        composition = nil
        self.presetName = presetName
    }

    /// A session exporting `composition` (its segments in order); the tags default to those of
    /// the first segment's file. With ``ExportPreset/passthrough`` the segments' packets are
    /// copied unchanged, when they share one format (codec, rate, channels); else re-encoded.
    public init(composition: Composition, presetName: ExportPreset) {
        asset = nil
        self.composition = composition
        self.presetName = presetName
    }

    /// The same, spelt as iOS code spells it: on iOS a composition is an asset, and the seeds
    /// write `AVAssetExportSession(asset: composition, presetName: AVAssetExportPresetPassthrough)`.
    public convenience init(asset composition: Composition, presetName: ExportPreset) {
        self.init(composition: composition, presetName: presetName)
    }

    // MARK: Settings

    /// Where to write (a `file://` URL). Required.
    public var outputURL: URL? {
        get { settings.withLock { $0.outputURL } }
        set { settings.withLock { $0.outputURL = newValue } }
    }

    /// The file type to write; nil (the default) takes it from ``outputURL``'s extension.
    public var outputFileType: ExportFileType? {
        get { settings.withLock { $0.outputFileType } }
        set { settings.withLock { $0.outputFileType = newValue } }
    }

    /// The part of the asset to export (nil: all of it). Re-encoding presets cut at the exact
    /// samples (`start × rate` rounded); passthrough keeps the packets overlapping the range.
    public var timeRange: AssetTimeRange? {
        get { settings.withLock { $0.timeRange } }
        set { settings.withLock { $0.timeRange = newValue } }
    }

    /// The tags to write; nil (the default) carries the asset's own over.
    public var metadata: AudioMetadata? {
        get { settings.withLock { $0.metadata } }
        set { settings.withLock { $0.metadata = newValue } }
    }

    /// The audio track to export (an ``AssetTrack/trackID``); nil takes the default audio track
    /// (the first marked default, else the first).
    public var audioTrackID: Int? {
        get { settings.withLock { $0.audioTrackID } }
        set { settings.withLock { $0.audioTrackID = newValue } }
    }

    /// Whether an existing file at ``outputURL`` may be replaced (default false: the export fails
    /// with ``TonearmError/fileExists(path:)`` and the file is untouched).
    public var overwritesExistingFile: Bool {
        get { settings.withLock { $0.overwritesExistingFile } }
        set { settings.withLock { $0.overwritesExistingFile = newValue } }
    }

    /// Whether the cover (the asset's, or that of ``metadata`` when set) is embedded in the
    /// output (default true). It is written to MP3, MP4/M4A and FLAC as an attached picture and
    /// to Ogg and Opus as a `METADATA_BLOCK_PICTURE` comment; WAV, AIFF, CAF, Matroska and ADTS
    /// get none.
    public var includesArtwork: Bool {
        get { settings.withLock { $0.includesArtwork } }
        set { settings.withLock { $0.includesArtwork = newValue } }
    }

    // MARK: State

    public var status: ExportStatus { state.withLock { $0.machine.status } }
    /// Why the export failed (set when ``status`` is `failed`).
    public var error: TonearmError? { state.withLock { $0.machine.error } }
    /// 0…1.
    public var progress: Double { state.withLock { $0.machine.progress } }

    /// The file types ``presetName`` can write, whatever the asset.
    public var supportedFileTypes: [ExportFileType] { presetName.supportedFileTypes }

    /// The file types this session can really write for this asset's audio track: for
    /// passthrough, those that hold the track's codec unchanged (AAC: m4a, mp4, caf, mka, aac —
    /// not wav); for re-encoding presets, the supported types whose encoder this FFmpeg has.
    /// Throws the asset's loading errors, `noAudioTrack`, `noSuchTrack`.
    public func compatibleFileTypes() async throws(TonearmError) -> [ExportFileType] {
        guard let asset else {
            guard presetName == .passthrough else { return ExportPlanner.compatibleTypes(preset: presetName, codec: "") }
            // A composition's passthrough writes its first segment's codec.
            guard let first = composition?.segments.first,
                  let track = try await Asset(url: first.url).track(withTrackID: first.trackID) else { return [] }
            return ExportPlanner.compatibleTypes(preset: .passthrough, codec: track.codecName)
        }
        let track = try await ExportPlanner.audioTrack(of: asset, trackID: audioTrackID)
        return ExportPlanner.compatibleTypes(preset: presetName, codec: track.codecName)
    }

    /// A stream of the progress (0…1): the current value at once, then each step of at least
    /// 0.5 %, ending when the export completes, fails or is cancelled. Subscribe before or during
    /// the export; subscribing after it ended gives the final value and an ended stream.
    public func progressUpdates() -> AsyncStream<Double> {
        let (stream, continuation) = AsyncStream<Double>.makeStream(bufferingPolicy: .unbounded)  // at most ~200 values: steps of 0.5 %
        let id = UUID()
        let ended = state.withLock { s -> Bool in
            continuation.yield(s.machine.progress)
            if s.machine.status.isFinal { return true }
            s.subscribers[id] = continuation
            return false
        }
        if ended { continuation.finish() } else {
            continuation.onTermination = { [weak self] _ in _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) } }
        }
        return stream
    }

    // MARK: Exporting

    /// Runs the export to its end. The work runs on a thread of its own; cancelling the calling
    /// task cancels the export.
    ///
    /// Throws (and sets ``status`` to `failed`, or `cancelled`): `invalidArgument` (no output
    /// URL, unknown file type, a file type the preset cannot write, a time range outside the
    /// asset), `invalidState` (the session ran before), the asset's loading errors,
    /// `noAudioTrack`, `noSuchTrack`, `incompatibleFileType` (passthrough of a codec the file
    /// type cannot hold, with the types that can), `encoderUnavailable`, `fileExists`,
    /// `writeFailed` (unwritable folder, full disk), `decodeFailed`, `exportCancelled`.
    public func export() async throws(TonearmError) {
        let s = settings.withLock { $0 }
        let displayPath = s.outputURL.map { $0.isFileURL ? $0.path : $0.absoluteString } ?? "<no output URL>"
        try state.withLock { st throws(TonearmError) in try st.machine.start(path: displayPath) }
        var target: OutputTarget?
        do throws(TonearmError) {
            let plan = if let asset {
                try await ExportPlanner.plan(asset: asset, preset: presetName, settings: s)
            } else {
                try await ExportPlanner.plan(composition: composition ?? Composition(), preset: presetName, settings: s)
            }
            target = try OutputTarget.prepare(path: plan.outputPath, overwrite: s.overwritesExistingFile)
            try await run(plan.job, target: target!)
            if cancelFlag.isSet { throw TonearmError.exportCancelled(path: plan.outputPath) }
            try target!.commit()
            end(.success(()))
        } catch {
            target?.discard()
            var e = error
            if cancelFlag.isSet, let t = target { e = .exportCancelled(path: t.path) }
            end(.failure(e))
            throw e
        }
    }

    /// Stops the export (from any thread): the work stops at its next packet, the temporary
    /// file is removed, `export()` throws `exportCancelled` and ``status`` becomes `cancelled`.
    /// Before `export()`, the session is cancelled and will not run. Does nothing once finished.
    public func cancelExport() {
        cancelFlag.set()
        let conts = state.withLock { s -> [AsyncStream<Double>.Continuation] in
            guard s.machine.cancel() else { return [] }
            defer { s.subscribers.removeAll() }
            return Array(s.subscribers.values)
        }
        for c in conts { c.finish() }
    }

    private func run(_ job: any ExportJob, target: OutputTarget) async throws(TonearmError) {
        let flag = cancelFlag
        let result: Result<Void, TonearmError> = await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Result<Void, TonearmError>, Never>) in
                let worker = Thread { [self] in
                    do throws(TonearmError) {
                        try job.run(target: target, cancel: flag) { self.publish($0) }
                        c.resume(returning: .success(()))
                    } catch {
                        c.resume(returning: .failure(error))
                    }
                }
                worker.name = "tonearm-export"
                worker.start()
            }
        } onCancel: {
            self.cancelExport()
        }
        try result.get()
    }

    private func publish(_ p: Double) {
        state.withLock { s in
            guard s.machine.report(progress: p) else { return }
            for c in s.subscribers.values { c.yield(s.machine.progress) }
        }
    }

    private func end(_ result: Result<Void, TonearmError>) {
        let conts = state.withLock { s -> [AsyncStream<Double>.Continuation] in
            let wasExporting = s.machine.status == .exporting
            s.machine.finish(result)
            if wasExporting, s.machine.status == .completed { for c in s.subscribers.values { c.yield(1) } }
            defer { s.subscribers.removeAll() }
            return Array(s.subscribers.values)
        }
        for c in conts { c.finish() }
    }
}
