// SPDX-License-Identifier: GPL-3.0-or-later
import COpenSSL
import Foundation
import TonearmCore

/// TLS over a ``TCPChannel`` with OpenSSL: TLS 1.2 or later, the server's certificate verified
/// against the system's trusted certificates (and ``NetworkLimits/additionalTrustedCertificates``)
/// and checked against the host name (or IP address). Every wait is the TCP channel's poll with
/// a timeout; ``cancel()`` cancels the TCP channel.
package final class TLSChannel: ByteChannel, @unchecked Sendable {
    private let tcp: TCPChannel
    private let context: OpaquePointer
    private let ssl: OpaquePointer
    private let closed = AtomicFlag()

    /// Performs the handshake within `limits.connectTimeout`. Throws
    /// ``NetworkFailure/tlsFailed(detail:)`` with OpenSSL's reason (an untrusted certificate, a
    /// name mismatch, no common protocol), or the TCP channel's failures.
    package init(over tcp: TCPChannel, host: String, limits: NetworkLimits) throws(NetworkFailure) {
        self.tcp = tcp
        guard let ctx = SSL_CTX_new(TLS_client_method()) else { throw .tlsFailed(detail: "cannot create a TLS context") }
        _ = tonearm_ssl_set_min_tls12(ctx)
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nil)
        SSL_CTX_set_default_verify_paths(ctx)
        if let extra = limits.additionalTrustedCertificates, SSL_CTX_load_verify_locations(ctx, extra, nil) != 1 {
            SSL_CTX_free(ctx)
            throw .tlsFailed(detail: "cannot read the certificates in \(extra)")
        }
        guard let ssl = SSL_new(ctx) else {
            SSL_CTX_free(ctx)
            throw .tlsFailed(detail: "cannot create a TLS connection")
        }
        context = ctx
        self.ssl = ssl
        var address = in6_addr()
        let isIP = inet_pton(AF_INET, host, &address) == 1 || inet_pton(AF_INET6, host, &address) == 1
        if isIP {
            X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host)
        } else {
            _ = tonearm_ssl_set_sni(ssl, host)
            SSL_set1_host(ssl, host)
        }
        SSL_set_fd(ssl, tcp.fd)
        let deadline = Date().addingTimeInterval(limits.connectTimeout)
        while true {
            ERR_clear_error()
            let r = SSL_connect(ssl)
            if r == 1 { break }
            let e = SSL_get_error(ssl, r)
            let left = deadline.timeIntervalSinceNow
            if e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE {
                guard left > 0 else { throw .timedOut(phase: "the TLS handshake with \(host)", seconds: limits.connectTimeout) }
                try tcp.waitFor(Int16(e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT), timeout: left, phase: "the TLS handshake with \(host)")
                continue
            }
            let verify = SSL_get_verify_result(ssl)
            let detail = verify != X509_V_OK
                ? String(cString: X509_verify_cert_error_string(verify))
                : Self.errorText()
            throw .tlsFailed(detail: detail)
        }
    }

    deinit {
        close()
        SSL_free(ssl)
        SSL_CTX_free(context)
    }

    private static func errorText() -> String {
        let code = ERR_get_error()
        guard code != 0 else { return "the handshake failed" }
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    package func read(into buffer: UnsafeMutableRawBufferPointer, timeout: Double) throws(NetworkFailure) -> Int {
        guard !buffer.isEmpty else { return 0 }
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if tcp.isCancelled { throw .connectionFailed(detail: "cancelled") }
            ERR_clear_error()
            let n = SSL_read(ssl, buffer.baseAddress, Int32(min(buffer.count, Int(Int32.max))))
            if n > 0 { return Int(n) }
            let e = SSL_get_error(ssl, n)
            switch e {
            case SSL_ERROR_ZERO_RETURN: return 0
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
                let left = deadline.timeIntervalSinceNow
                guard left > 0 else { throw .timedOut(phase: "waiting for data", seconds: timeout) }
                try tcp.waitFor(Int16(e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT), timeout: left, phase: "waiting for data")
            case SSL_ERROR_SYSCALL where ERR_peek_error() == 0:
                return 0  // the peer closed without close_notify: the end of a close-delimited body
            default:
                throw .connectionFailed(detail: "TLS: \(Self.errorText())")
            }
        }
    }

    package func write(_ bytes: [UInt8], timeout: Double) throws(NetworkFailure) {
        let deadline = Date().addingTimeInterval(timeout)
        var offset = 0
        while offset < bytes.count {
            ERR_clear_error()
            let n = bytes.withUnsafeBytes { SSL_write(ssl, $0.baseAddress! + offset, Int32(bytes.count - offset)) }
            if n > 0 { offset += Int(n); continue }
            let e = SSL_get_error(ssl, n)
            guard e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE else {
                throw .connectionFailed(detail: "TLS: \(Self.errorText())")
            }
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { throw .timedOut(phase: "sending the request", seconds: timeout) }
            try tcp.waitFor(Int16(e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT), timeout: left, phase: "sending the request")
        }
    }

    package func cancel() { tcp.cancel() }

    package func close() {
        guard closed.setIfClear() else { return }
        tcp.close()
    }
}
