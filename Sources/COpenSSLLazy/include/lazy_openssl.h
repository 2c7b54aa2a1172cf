// OpenSSL (libssl, libcrypto) loaded on first use: see openssl_stubs.c and scripts/gen-lazy-stubs.
// SPDX-License-Identifier: GPL-3.0-or-later
#ifndef TONEARM_COPENSSL_LAZY_H
#define TONEARM_COPENSSL_LAZY_H

/// Loads libssl.so.3 (once per process; RTLD_LOCAL; libcrypto.so.3 comes with it) and looks up
/// every function Tonearm calls. Returns 1 when it is ready, 0 when it is not installed or lacks
/// a function: then `tonearm_openssl_load_error` says why. The first stub called (an HTTPS
/// connection, an AES-128 HLS segment) loads it; a program that does neither never loads it.
/// OpenSSL 3 initialises itself on its first call, as when linked. Thread-safe.
int tonearm_openssl_load(void);

/// Why `tonearm_openssl_load` failed, or NULL when it has not failed.
const char *tonearm_openssl_load_error(void);

/// The name of the library loaded: "libssl.so.3".
extern const char *const tonearm_openssl_library;

/// Whether OpenSSL is loaded in this process yet (a test and a diagnostic). Any thread.
int tonearm_openssl_is_loaded(void);

/// The real function number `index` (of the generated table). Loads the library when no one
/// has; when it cannot be loaded, prints why to standard error and ends the process with status
/// 127, as FFmpeg's stubs do (OpenSSL is a dependency of the package).
void *tonearm_openssl_function(int index);

#endif
