// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: HLS playlists (master and media) and their attribute lists.
import Foundation
import TonearmNetwork

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let url = URL(string: "https://example.com/live/index.m3u8")!
    if let playlist = try? HLSPlaylist.parse(bytes, url: url) {
        touch(playlist)
    }
    _ = HLSPlaylist.attributes(Substring(String(decoding: bytes, as: UTF8.self)))
    return 0
}

private func touch(_ playlist: HLSPlaylist) {
    // What a player reads of a parsed playlist.
    switch playlist {
    case .master(let master):
        for v in master.variants { _ = (v.url, v.bandwidth, v.codecs) }
    case .media(let media):
        _ = (media.duration, media.isLive, media.endSequence)
        for s in [media.mediaSequence, media.endSequence - 1, media.endSequence, 0, -1] {
            if let segment = media.segment(sequence: s) { _ = segment.key?.iv(forSequence: s) }
        }
    }
}
