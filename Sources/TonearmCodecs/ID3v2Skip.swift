// SPDX-License-Identifier: GPL-3.0-or-later

/// Where the ID3v2 tags at the start of a file end (several tags in a row are skipped, as
/// FFmpeg does).
enum ID3v2Skip {
    static func end(of file: any TagByteSource) -> Int? {
        var offset = 0
        while let h = file.read(at: offset, count: 10), h[0] == 0x49, h[1] == 0x44, h[2] == 0x33,
              h[3] != 0xFF, h[4] != 0xFF, h[6] & 0x80 == 0, h[7] & 0x80 == 0, h[8] & 0x80 == 0, h[9] & 0x80 == 0 {
            let size = Int(h[6]) << 21 | Int(h[7]) << 14 | Int(h[8]) << 7 | Int(h[9])
            offset += 10 + size + (h[5] & 0x10 != 0 ? 10 : 0)
        }
        return offset < file.size ? offset : nil
    }
}
