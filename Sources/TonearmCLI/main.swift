// SPDX-License-Identifier: GPL-3.0-or-later
import Tonearm
print("tonearm")
