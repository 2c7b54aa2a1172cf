# scripts/bench's driver: the options, which parts run, the build, the work folder, the reports
# and the JSON file. Each part is a module of this folder (decode, playback, eq, sound, start,
# scan, video, daemon, web, record, longrun) with NAME, TITLE, PEERS (machine() keys printed in the header), TOOLS (programs it
# needs), NEEDS_FLAC (it uses the benchmark FLAC), an optional add_arguments(ap) for its own
# options and ONLY_FLAG (an older --X-only spelling), bench(ctx) → dict and report(dict, ctx) →
# bool (whether its goals are met), and DEFAULT = False if it runs only when named (longrun). A new
# part is a new module named in PARTS.
# SPDX-License-Identifier: GPL-3.0-or-later
import argparse
import importlib
import json
import os
import types

import common
from common import log

PARTS = ["decode", "playback", "eq", "sound", "start", "scan", "video", "daemon", "web", "record", "longrun"]
ALIASES = {"library": "scan", "decoding": "decode"}


def main(default_parts: list[str] | None = None) -> None:
    modules = {name: importlib.import_module(name) for name in PARTS}
    ap = argparse.ArgumentParser(
        prog="scripts/bench",
        description="Benchmark tonearm against ffmpeg, sox, MPD, mpv and ffplay. Parts: "
                    + ", ".join(f"{n} ({m.TITLE})" for n, m in modules.items())
                    + "; all but longrun by default.")
    ap.add_argument("parts", nargs="*", metavar="PART", help="parts to run (in the order above; default: all)")
    ap.add_argument("--quick", action="store_true",
                    help="a smoke run: 1-minute file, 10 s playback window, fewer repetitions, 1,000 library files")
    ap.add_argument("--no-install", action="store_true", help="do not run scripts/install-deps --bench")
    ap.add_argument("--tonearm", metavar="PATH", help="measure this tonearm binary instead of building one")
    ap.add_argument("--runs", type=int, default=None, help="timed runs per command (default 5, quick 3)")
    ap.add_argument("--json", metavar="PATH", help="also write every figure to PATH as JSON")
    ap.add_argument("--sequential", action="store_true", help="play the players one after another (parts playback, eq)")
    ap.add_argument("--window", type=float, default=None,
                    help="playback window in seconds (parts playback, eq; default 60, quick 10)")
    for m in modules.values():
        if getattr(m, "ONLY_FLAG", None):
            ap.add_argument(m.ONLY_FLAG, action="append_const", const=m.NAME, dest="only",
                            help=f"run only the {m.NAME} part (= scripts/bench {m.NAME})")
        if hasattr(m, "add_arguments"):
            m.add_arguments(ap)
    args = ap.parse_args()
    chosen = [ALIASES.get(p, p) for p in (args.parts or [])] + (args.only or [])
    unknown = [p for p in chosen if p not in modules]
    if unknown:
        ap.error(f"unknown part {', '.join(unknown)} (parts: {', '.join(PARTS)})")
    # A part with DEFAULT = False (longrun: an hour and more) runs only when named.
    chosen = chosen or default_parts or [p for p in PARTS if getattr(modules[p], "DEFAULT", True)]
    parts = [modules[p] for p in PARTS if p in chosen]

    minutes, window = (1, 10.0) if args.quick else (10, 60.0)
    ctx = types.SimpleNamespace(args=args, quick=args.quick, minutes=minutes, window=args.window or window,
                                runs=args.runs or (3 if args.quick else 5), flac=None, tonearm=None, machine=None)
    common.setup()
    ctx.machine = common.machine()
    tools = sorted({t for m in parts for t in m.TOOLS})
    if args.tonearm:
        ctx.tonearm = os.path.abspath(args.tonearm)
    else:
        ctx.tonearm = common.install_and_build(args.no_install, tools)
    if any(m.NEEDS_FLAC for m in parts):
        ctx.flac = common.work("bench.flac")
        log(f"Generating a {minutes}-minute 44.1 kHz stereo FLAC (tones + noise)…")
        common.make_flac(ctx.flac, minutes * 60)
    results = {}
    for m in parts:
        log(f"Part {m.NAME}: {m.TITLE}")
        results[m.NAME] = m.bench(ctx)
    log("")
    common.print_machine(ctx.machine, sorted({p for m in parts for p in m.PEERS}))
    met = True
    for m in parts:
        met = m.report(results[m.NAME], ctx) and met
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": ctx.machine, **results}, f, indent=2)
    log("")
    log("All goals met." if met else "Some goals are not met (see the tables).")
