// SPDX-License-Identifier: GPL-3.0-or-later

/// Bytes a demuxer reads as it would read a file, from wherever they come (a network source,
/// memory): `AudioFile(byteSource:name:)` decodes from one.
///
/// Threading: one reader thread calls ``read(into:)`` and ``seek(to:)``; a read may block until
/// the bytes arrive, but never without bound (the source's own limits end the wait).
public protocol ByteSource: AnyObject, Sendable {
    /// The total length in bytes, when known (nil for an endless stream).
    var length: Int64? { get }
    /// Whether ``seek(to:)`` can move anywhere (false: forward reads only are cheap; seeking
    /// still works within what the source keeps).
    var isSeekable: Bool { get }
    /// Reads up to `buffer.count` bytes at the position; 0 at the end.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(TonearmError) -> Int
    /// Moves the position; false when it is outside the source.
    func seek(to offset: Int64) -> Bool
    /// The position.
    var position: Int64 { get }
    /// The last `count` bytes (all of them when the source is shorter), read without moving the
    /// position or disturbing what is being read — a source that fetches asks for them with a
    /// request of their own. Nil when it cannot (length unknown, no ranges: the default). For
    /// the tags at a file's end, which decide where its audio ends before it is demuxed. The
    /// reader thread.
    func readTail(_ count: Int) -> [UInt8]?
}

extension ByteSource {
    public func readTail(_ count: Int) -> [UInt8]? { nil }
}
