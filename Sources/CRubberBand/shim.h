// librubberband's C API (time-stretching with pitch kept).
// SPDX-License-Identifier: GPL-3.0-or-later
#ifndef TONEARM_CRUBBERBAND_SHIM_H
#define TONEARM_CRUBBERBAND_SHIM_H
#include <rubberband/rubberband-c.h>
#endif
