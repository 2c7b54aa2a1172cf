// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmCompat

// Seed 003 ("从视频中提取音频"): the post's AVAsset extension that extracts a video's sound —
// every audio track into an AVMutableComposition, exported with the passthrough preset to a CAF
// file — and its use. Copied as it is, with Apple's names (TonearmCompat). What had to change,
// and why:
//   - `chooseVideo { videoUrl in … }` (the post's UIKit video picker) → a function taking the
//     video's URL, `extractAudio(fromVideo:into:callback:failure:)`;
//   - `XYFileManager.rootURL!` (the app's own folder helper) → the folder given to it;
//   - `Toast.make(error.localizedDescription)` (a UIKit toast) → the caller's `failure`;
//   - Swift 6: the escaping `success`/`failure` closures are `@Sendable` (3 signature lines), as
//     the export calls them from its own task — as the iOS SDK's `exportAsynchronously` handler
//     is `@Sendable` in Swift 6 mode there too.
// 6 of the listings' 73 code lines changed (UIKit 2, the app's helper 1, Swift 6 3); none for a
// library difference.

fileprivate extension AVAsset {

    // 对外提供写入的方法
    func writeAudioTrack(to url: URL,
                         success: @escaping @Sendable () -> (),
                         failure: @escaping @Sendable (Error) -> ()) {
        do {
            let asset = try audioAsset()
            asset.write(to: url, success: success, failure: failure)
        } catch {
            failure(error)
        }
    }

    // 写入到指定 URL
    private func write(to url: URL, success: @escaping @Sendable () -> (), failure: @escaping @Sendable (Error) -> ()) {
        try? FileManager().removeItem(at: url)

        // Create an export session that will output an audio track (CAF file)
        if let exportSession = AVAssetExportSession(asset: self, presetName: AVAssetExportPresetPassthrough) {

            exportSession.outputFileType = .caf
            exportSession.outputURL = url

            exportSession.exportAsynchronously {
                switch exportSession.status {
                case .completed:
                    success()
                default:
                    let error = NSError(domain: "提取音频失败", code: 0, userInfo: nil)
                    failure(error)
                    break
                }
            }
        }else{
            let error = NSError(domain: "提取音频失败", code: 0, userInfo: nil)
            failure(error)
        }
    }

    // 生成要提取音频的音轨对象
    private func audioAsset() throws -> AVAsset {
        let composition = AVMutableComposition()
        let audioTracks = tracks(withMediaType: .audio)

        for track in audioTracks {
            let compositionTrack = composition.addMutableTrack(withMediaType: .audio, preferredTrackID: kCMPersistentTrackID_Invalid)
            try compositionTrack?.insertTimeRange(track.timeRange, of: track, at: track.timeRange.start)
            compositionTrack?.preferredTransform = track.preferredTransform
        }
        return composition
    }
}

// 使用方式如下:
public func extractAudio(fromVideo videoUrl: URL, into rootURL: URL,
                         callback: @escaping @Sendable (URL) -> Void, failure: @escaping @Sendable (Error) -> Void) {
    let asset = AVURLAsset(url: videoUrl)
    let audioUrl = rootURL.appendingPathComponent( UUID().uuidString + ".caf")

    asset.writeAudioTrack(to: audioUrl) {
        callback(audioUrl)
    } failure: { error in
        failure(error)
    }
}
