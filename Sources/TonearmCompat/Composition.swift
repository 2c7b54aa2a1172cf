// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization

// AVMutableComposition as iOS code uses it (issue 23): a composition is an asset — returned as
// an `AVAsset`, exported by `AVAssetExportSession(asset:presetName:)` — built with
// `addMutableTrack(withMediaType:preferredTrackID:)` and the track's
// `insertTimeRange(_:of:at:)`, synchronously as on iOS. It is Tonearm's ``Composition`` (one
// audio track) inside a class, as Apple's is a reference.

/// What `AVAsset` is here: a file's ``Asset`` or an ``AVMutableComposition``; both give their
/// tracks synchronously (AVAsset's `tracks(withMediaType:)`) and are exported by
/// `AVAssetExportSession(asset:presetName:)`.
public protocol AVAssetProtocol: AnyObject, Sendable {
    /// The tracks of `mediaType`; empty when the file cannot be read (the reason is logged), as
    /// iOS's gives none.
    func tracks(withMediaType mediaType: AssetMediaType) -> [AssetTrack]
    /// A session exporting this asset with `presetName`.
    func makeExportSession(presetName: ExportPreset) -> AssetExportSession
}

public typealias AVMediaType = AssetMediaType
public typealias AVAssetTrack = AssetTrack
public typealias AVFileType = ExportFileType
public typealias AVAssetExportSessionStatus = ExportStatus
public typealias CMPersistentTrackID = Int32
/// `kCMPersistentTrackID_Invalid`: "any ID" to `addMutableTrack(withMediaType:preferredTrackID:)`.
public let kCMPersistentTrackID_Invalid: CMPersistentTrackID = 0
/// `AVAssetExportPresetPassthrough`: the packets copied, not re-encoded.
public let AVAssetExportPresetPassthrough = ExportPreset.passthrough

/// `CGAffineTransform`, for the tracks' `preferredTransform` (Foundation's `AffineTransform`;
/// an audio track's is the identity).
public typealias CGAffineTransform = AffineTransform

extension AssetTrack {
    /// `AVAssetTrack.preferredTransform`: the identity (Tonearm composes audio only).
    public var preferredTransform: CGAffineTransform { .identity }
}

extension Asset: AVAssetProtocol {
    public nonisolated func tracks(withMediaType mediaType: AssetMediaType) -> [AssetTrack] {
        do { return try readTracks(withMediaType: mediaType) } catch {
            compatLogger.warning("AVAsset.tracks(withMediaType:): \(error)")
            return []
        }
    }

    public nonisolated func makeExportSession(presetName: ExportPreset) -> AssetExportSession {
        AssetExportSession(asset: self, presetName: presetName)
    }
}

/// `AVMutableComposition`: a ``Composition`` made by its tracks' inserts.
public final class AVMutableComposition: AVAssetProtocol {
    let state = Mutex<(composition: Composition, hasAudioTrack: Bool)>((Composition(), false))

    public init() {}

    /// The composition as it is now (a value: later inserts do not change it).
    public var composition: Composition { state.withLock { $0.composition } }

    /// Seconds.
    public var duration: Double { composition.duration }

    /// `addMutableTrack(withMediaType:preferredTrackID:)`: the composition's audio track, made
    /// by the first call; nil for another media type or a second audio track (a Tonearm
    /// composition holds one audio track), as iOS gives nil for a track it cannot add.
    public func addMutableTrack(withMediaType mediaType: AssetMediaType, preferredTrackID: CMPersistentTrackID) -> AVMutableCompositionTrack? {
        guard mediaType == .audio else { return nil }
        let added = state.withLock { s -> Bool in
            defer { s.hasAudioTrack = true }
            return !s.hasAudioTrack
        }
        return added ? AVMutableCompositionTrack(composition: self, trackID: preferredTrackID == kCMPersistentTrackID_Invalid ? 1 : preferredTrackID) : nil
    }

    /// The composition's tracks are not described as files' tracks are: none is given.
    public func tracks(withMediaType mediaType: AssetMediaType) -> [AssetTrack] { [] }

    public func makeExportSession(presetName: ExportPreset) -> AssetExportSession {
        AssetExportSession(composition: composition, presetName: presetName)
    }
}

/// `AVMutableCompositionTrack`: the composition's audio track.
public final class AVMutableCompositionTrack: Sendable {
    public let composition: AVMutableComposition
    public let trackID: CMPersistentTrackID
    private let transform = Mutex(CGAffineTransform.identity)

    init(composition: AVMutableComposition, trackID: CMPersistentTrackID) {
        self.composition = composition
        self.trackID = trackID
    }

    /// `preferredTransform`: kept, and unused for audio.
    public var preferredTransform: CGAffineTransform {
        get { transform.withLock { $0 } }
        set { transform.withLock { $0 = newValue } }
    }

    /// `insertTimeRange(_:of:at:)`: `timeRange` of `track` (a loaded asset's audio track) at
    /// `startTime` seconds of the composition; what was there moves later
    /// (``Composition/insertTimeRange(_:of:at:)``, whose errors it throws).
    public func insertTimeRange(_ timeRange: AssetTimeRange, of track: AssetTrack, at startTime: Double) throws {
        try composition.state.withLock { s throws(TonearmError) in try s.composition.insertTimeRange(timeRange, of: track, at: startTime) }
    }
}

extension AssetExportSession {
    /// `AVAssetExportSession(asset:presetName:)` for any `AVAsset` — a file or a composition. As
    /// on iOS it is failable; it fails for no asset today (the preset is a Tonearm
    /// ``ExportPreset``, known by type).
    public convenience init?(asset: any AVAssetProtocol, presetName: ExportPreset) {
        let made = asset.makeExportSession(presetName: presetName)
        if let composition = made.composition {
            self.init(composition: composition, presetName: presetName)
        } else if let file = made.asset {
            self.init(asset: file, presetName: presetName)
        } else {
            return nil
        }
    }

    /// `exportAsynchronously(completionHandler:)`: exports on a task of its own and calls
    /// `handler` when ``status`` is `completed`, `failed` (``error`` says why) or `cancelled`.
    public func exportAsynchronously(completionHandler handler: @escaping @Sendable () -> Void) {
        Task {
            try? await export()
            handler()
        }
    }
}
