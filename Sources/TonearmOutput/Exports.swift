// SPDX-License-Identifier: GPL-3.0-or-later
// TonearmOutput is the PulseAudio driver. The render contract, the registry and the drivers that
// need no C library (null, file) live in TonearmRender, which `import TonearmOutput` brings along.
@_exported import TonearmRender
