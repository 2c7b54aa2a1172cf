// SPDX-License-Identifier: GPL-3.0-or-later
import COpenSSL
import TonearmCore

/// AES-128-CBC with PKCS7 padding (the HLS `METHOD=AES-128` segment encryption), through
/// OpenSSL's EVP interface. Stateless; any thread.
package enum AES128 {
    /// Decrypts `ciphertext` with the 16-byte `key` and `iv`. Throws
    /// ``NetworkFailure/decryptionFailed(detail:)`` for a key or IV of the wrong size, a
    /// ciphertext that is not whole blocks, or bad padding (most often a wrong key or IV).
    package static func decryptCBC(_ ciphertext: [UInt8], key: [UInt8], iv: [UInt8]) throws(NetworkFailure) -> [UInt8] {
        guard key.count == 16 else { throw .decryptionFailed(detail: "the key has \(key.count) bytes, not 16") }
        guard iv.count == 16 else { throw .decryptionFailed(detail: "the IV has \(iv.count) bytes, not 16") }
        guard !ciphertext.isEmpty, ciphertext.count % 16 == 0 else {
            throw .decryptionFailed(detail: "\(ciphertext.count) bytes is not a whole number of 16-byte blocks")
        }
        guard let ctx = EVP_CIPHER_CTX_new() else { throw .decryptionFailed(detail: "out of memory") }
        defer { EVP_CIPHER_CTX_free(ctx) }
        guard EVP_DecryptInit_ex(ctx, EVP_aes_128_cbc(), nil, key, iv) == 1 else {
            throw .decryptionFailed(detail: "the cipher could not be set up")
        }
        var out = [UInt8](repeating: 0, count: ciphertext.count + 16)
        var written: Int32 = 0
        var total = 0
        let ok = out.withUnsafeMutableBufferPointer { o -> Bool in
            // In pieces: EVP takes an Int32 length.
            var offset = 0
            while offset < ciphertext.count {
                let n = min(1 << 24, ciphertext.count - offset)
                let r = ciphertext.withUnsafeBufferPointer { c in
                    EVP_DecryptUpdate(ctx, o.baseAddress! + total, &written, c.baseAddress! + offset, Int32(n))
                }
                guard r == 1 else { return false }
                total += Int(written)
                offset += n
            }
            guard EVP_DecryptFinal_ex(ctx, o.baseAddress! + total, &written) == 1 else { return false }
            total += Int(written)
            return true
        }
        ERR_clear_error()
        guard ok else { throw .decryptionFailed(detail: "bad padding after decryption: a wrong key or IV") }
        out.removeSubrange(total...)
        return out
    }
}
