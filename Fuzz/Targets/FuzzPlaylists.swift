// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: the playlist readers (M3U / M3U8, PLS, XSPF), each format forced and detected.
import Foundation
import TonearmPlaylists

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Data(bytes: data, count: size)
    let base = URL(fileURLWithPath: "/fuzz/dir/", isDirectory: true)
    _ = try? Playlist.parse(data: bytes, format: nil, baseURL: base)
    for format in PlaylistFormat.allCases {
        _ = try? Playlist.parse(data: bytes, format: format, baseURL: base)
    }
    _ = try? Playlist.parse(data: bytes, format: .m3u, baseURL: URL(string: "http://example.com/a/list.m3u"))
    return 0
}
