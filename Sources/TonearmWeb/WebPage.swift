// SPDX-License-Identifier: GPL-3.0-or-later

/// The web remote's page, its style and its script, in the binary: nothing is loaded from
/// elsewhere (no CDN, no web font). Every control is a real `<button>` or `<input>` with an
/// accessible name; the layout is one column that fits a 375 px phone and centres on a desktop.
public enum WebPage {
    public static let html = head(title: "Tonearm") + """
        <body>
        <main>
        <section id="now" aria-label="Now playing">
          <img id="cover" alt="Cover art" width="96" height="96" hidden>
          <h1 id="title">Nothing playing</h1>
          <p id="artist"></p>
          <p id="album"></p>
          <div class="seek">
            <span id="elapsed">0:00</span>
            <div class="bar">
              <input id="seek" type="range" min="0" max="0" step="1" value="0" aria-label="Seek" disabled>
              <div id="buffered" role="img" aria-label="Buffered: none" hidden></div>
            </div>
            <span id="total">–:––</span>
          </div>
          <div class="controls">
            <button id="previous" type="button" aria-label="Previous"><svg viewBox="0 0 24 24" aria-hidden="true"><path d="M6 6h2v12H6zM9.5 12 18 18V6z"/></svg></button>
            <button id="playpause" type="button" class="main" aria-label="Play"><svg viewBox="0 0 24 24" aria-hidden="true"><path d="M8 5v14l11-7z"/></svg></button>
            <button id="next" type="button" aria-label="Next"><svg viewBox="0 0 24 24" aria-hidden="true"><path d="M16 6h2v12h-2zM6 18l8.5-6L6 6z"/></svg></button>
          </div>
          <div class="modes">
            <button id="repeat" type="button" aria-label="Repeat" aria-pressed="false">Repeat</button>
            <button id="random" type="button" aria-label="Shuffle" aria-pressed="false">Shuffle</button>
            <label class="xfade">Crossfade <select id="crossfade" aria-label="Crossfade"><option value="0">Off</option><option value="2">2 s</option><option value="5">5 s</option><option value="10">10 s</option></select></label>
            <label class="xfade" id="equalizer-label" hidden>Equalizer <select id="equalizer" aria-label="Equalizer"></select></label>
            <label class="volume">Volume <input id="volume" type="range" min="0" max="100" step="1" value="0" aria-label="Volume"></label>
          </div>
          <p id="status" role="status" aria-live="polite"></p>
        </section>
        <section aria-labelledby="queue-heading">
          <h2 id="queue-heading">Queue</h2>
          <div class="bar">
            <button id="clear" type="button">Clear queue</button>
            <form id="save" class="inline"><input id="save-name" aria-label="Playlist name" placeholder="Playlist name" maxlength="200" required><button type="submit">Save queue</button></form>
          </div>
          <ol id="queue"></ol>
        </section>
        <section id="library-section" aria-labelledby="library-heading">
          <h2 id="library-heading">Library</h2>
          <input id="search" type="search" aria-label="Search the library" placeholder="Search: title, artist, album, pinyin" autocomplete="off">
          <nav id="crumbs" aria-label="Where in the library"></nav>
          <ul id="library" class="list"></ul>
        </section>
        <section aria-labelledby="playlists-heading">
          <h2 id="playlists-heading">Playlists</h2>
          <ul id="playlists" class="list"></ul>
        </section>
        <section aria-labelledby="outputs-heading">
          <h2 id="outputs-heading">Outputs</h2>
          <ul id="outputs" class="list"></ul>
          <label class="volume" id="system-volume-label" hidden>System volume <input id="system-volume" type="range" min="0" max="100" step="1" value="0" aria-label="System volume"></label>
        </section>
        </main>
        <script src="/app.js"></script>
        </body>
        </html>

        """

    public static let style = """
        :root { --fg: #1b1b1f; --bg: #fafafa; --muted: #5f6068; --accent: #b3261e; --line: #d9d9de; --row: #f0f0f3; }
        @media (prefers-color-scheme: dark) {
          :root { --fg: #ececf1; --bg: #151518; --muted: #a3a3ad; --accent: #ff8a80; --line: #34343b; --row: #202026; }
        }
        * { box-sizing: border-box; }
        html { -webkit-text-size-adjust: 100%; }
        body { margin: 0; font: 16px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
               color: var(--fg); background: var(--bg); }
        main { max-width: 40rem; margin: 0 auto; padding: 1rem; }
        h1 { font-size: 1.5rem; margin: .5rem 0 .25rem; overflow-wrap: anywhere; }
        h2 { font-size: 1.1rem; margin: 1.5rem 0 .5rem; }
        #artist { margin: 0; font-weight: 600; }
        #album { margin: 0 0 1rem; color: var(--muted); }
        .seek { display: flex; align-items: center; gap: .5rem; font-variant-numeric: tabular-nums; }
        .seek .bar { flex: 1; min-width: 0; position: relative; }
        .seek input { width: 100%; margin: 0; display: block; }
        #buffered { position: absolute; left: 0; right: 0; bottom: .2rem; height: 3px; }
        #buffered span { position: absolute; top: 0; bottom: 0; background: var(--muted); border-radius: 2px; }
        input[type=range] { accent-color: var(--accent); height: 2rem; }
        .controls { display: flex; justify-content: center; gap: 1rem; margin: 1rem 0; }
        button { font: inherit; color: inherit; background: var(--row); border: 1px solid var(--line); border-radius: .5rem;
                 min-width: 3rem; min-height: 3rem; padding: .25rem .75rem; cursor: pointer; }
        button:focus-visible, input:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
        .controls button { min-width: 4rem; }
        .controls svg { width: 1.75rem; height: 1.75rem; fill: currentColor; vertical-align: middle; }
        .controls .main { min-width: 5rem; background: var(--accent); color: var(--bg); border-color: var(--accent); }
        .modes { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem; }
        .modes button[aria-pressed=true] { background: var(--accent); color: var(--bg); border-color: var(--accent); }
        select { font: inherit; color: inherit; background: var(--row); border: 1px solid var(--line); border-radius: .5rem; min-height: 3rem; padding: 0 .5rem; }
        .volume { display: flex; align-items: center; gap: .5rem; flex: 1; min-width: 10rem; }
        .volume input { flex: 1; min-width: 0; }
        #status { min-height: 1.4em; color: var(--accent); }
        #queue { list-style: none; padding: 0; margin: 0; }
        #queue li { display: flex; gap: .5rem; align-items: stretch; margin: 0 0 .25rem; }
        #queue .jump { flex: 1; min-width: 0; text-align: left; display: flex; gap: .5rem; align-items: baseline; }
        #queue .jump .t { flex: 1; min-width: 0; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
        #queue .jump .d { color: var(--muted); font-variant-numeric: tabular-nums; }
        #queue li[aria-current=true] .jump { border-color: var(--accent); font-weight: 600; }
        #queue .remove { flex: none; }
        #queue li .small, .list .small { flex: none; min-width: 2.75rem; padding: .25rem .5rem; }
        #queue li.drop { outline: 2px dashed var(--accent); }
        #cover { float: right; width: 6rem; height: 6rem; object-fit: cover; border-radius: .5rem; margin: .5rem 0 .5rem .5rem; }
        form { display: flex; flex-direction: column; gap: .75rem; max-width: 20rem; }
        input[type=search], form input { font: inherit; padding: .5rem; min-height: 3rem; color: inherit; background: var(--bg);
                                         border: 1px solid var(--line); border-radius: .5rem; }
        form.inline { flex-direction: row; flex: 1; min-width: 0; max-width: none; gap: .5rem; }
        form.inline input { flex: 1; min-width: 0; }
        .bar { display: flex; flex-wrap: wrap; gap: .5rem; margin: 0 0 .5rem; }
        #search { width: 100%; }
        #crumbs { display: flex; flex-wrap: wrap; gap: .25rem; margin: .5rem 0; }
        .list { list-style: none; padding: 0; margin: 0; }
        .list li { display: flex; gap: .5rem; align-items: center; margin: 0 0 .25rem; }
        .list .open { flex: 1; min-width: 0; text-align: left; display: flex; gap: .5rem; align-items: center; }
        .list .open img { width: 2.5rem; height: 2.5rem; object-fit: cover; border-radius: .25rem; flex: none; }
        .list .t { flex: 1; min-width: 0; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
        .list .info { flex: 1; min-width: 0; }
        .list .info .t { display: block; }
        .list .sub { display: block; color: var(--muted); font-size: .875rem; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
        .list button[aria-pressed=true] { background: var(--accent); color: var(--bg); border-color: var(--accent); }
        .stars { display: flex; gap: 0; }
        .list .stars button { min-width: 2rem; min-height: 2rem; padding: 0; border: none; background: none; color: var(--muted);
                              font-size: 1.25rem; line-height: 1; }
        .list .stars button[aria-pressed=true] { background: none; color: var(--accent); }

        """

    public static let script = """
        "use strict";
        const $ = (id) => document.getElementById(id);
        let state = null, base = 0, baseAt = 0, seeking = false, queue = [];

        function fmt(s) {
          if (s == null || !isFinite(s)) return "–:––";
          s = Math.max(0, Math.floor(s));
          const h = Math.floor(s / 3600), m = Math.floor(s / 60) % 60, x = String(s % 60).padStart(2, "0");
          return h ? h + ":" + String(m).padStart(2, "0") + ":" + x : m + ":" + x;
        }
        function say(text) { $("status").textContent = text || ""; }

        async function send(command, value) {
          const body = value === undefined ? { command } : { command, value };
          try {
            const r = await fetch("/api/command", { method: "POST", headers: { "Content-Type": "application/json" },
                                                    body: JSON.stringify(body), credentials: "same-origin" });
            if (r.status === 401) { location.href = "/login"; return false; }
            if (!r.ok) { const e = await r.json().catch(() => ({ error: r.statusText })); say(e.error); return false; }
            say(""); return true;
          } catch (e) { say("The daemon does not answer."); return false; }
        }

        // The elapsed time between two pushes is counted here, not asked for.
        function elapsedNow() {
          if (!state) return 0;
          const e = state.state === "play" ? base + (performance.now() - baseAt) / 1000 : base;
          return state.duration ? Math.min(e, state.duration) : e;
        }
        function tick() {
          if (!state || seeking) return;
          const e = elapsedNow();
          $("seek").value = e;
          $("elapsed").textContent = fmt(e);
        }
        setInterval(tick, 250);

        function songName(song) { return song.artist ? song.title + " — " + song.artist : song.title; }

        function render(s) {
          state = s; base = s.elapsed || 0; baseAt = performance.now();
          const song = s.song;
          $("title").textContent = song ? song.title : "Nothing playing";
          $("artist").textContent = song ? song.artist : "";
          $("album").textContent = song ? song.album : "";
          document.title = song ? songName(song) : "Tonearm";
          const cover = $("cover");
          if (song && song.cover) { const src = "/api/cover/" + song.cover; if (cover.getAttribute("src") !== src) { cover.hidden = false; cover.src = src; } }
          else { cover.hidden = true; cover.removeAttribute("src"); }
          const playing = s.state === "play", pp = $("playpause");
          pp.setAttribute("aria-label", playing ? "Pause" : "Play");
          pp.querySelector("path").setAttribute("d", playing ? "M6 5h4v14H6zM14 5h4v14h-4z" : "M8 5v14l11-7z");
          const seek = $("seek");
          seek.max = s.duration || 0;
          seek.disabled = !s.duration;
          $("total").textContent = fmt(s.duration);
          // A stream's parts that have arrived, as a line under the seek bar.
          const buf = $("buffered"), parts = s.buffered && s.duration ? s.buffered : [];
          buf.hidden = parts.length === 0;
          buf.replaceChildren(...parts.map(([a, b]) => {
            const span = document.createElement("span");
            span.style.left = (a / s.duration * 100) + "%";
            span.style.width = (Math.max(0, Math.min(b, s.duration) - a) / s.duration * 100) + "%";
            return span;
          }));
          buf.setAttribute("aria-label", parts.length ? "Buffered " + parts.map(([a, b]) => fmt(a) + "–" + fmt(b)).join(", ") : "Buffered: none");
          $("repeat").setAttribute("aria-pressed", String(s.repeat));
          $("random").setAttribute("aria-pressed", String(s.random));
          const xf = $("crossfade");
          if (![...xf.options].some((o) => Number(o.value) === s.crossfade)) xf.add(new Option(s.crossfade + " s", s.crossfade));
          if (document.activeElement !== xf) xf.value = String(s.crossfade);
          const vol = $("volume");
          vol.disabled = s.volume == null;
          if (s.volume != null && document.activeElement !== vol) vol.value = s.volume;
          markCurrent();
          tick();
        }

        function markCurrent() {
          const id = state && state.song ? state.song.id : -1;
          for (const li of $("queue").children) {
            if (Number(li.dataset.id) === id) li.setAttribute("aria-current", "true"); else li.removeAttribute("aria-current");
          }
        }

        function button(text, label, onClick, cls) {
          const b = document.createElement("button");
          b.type = "button";
          if (cls) b.className = cls;
          if (label) b.setAttribute("aria-label", label);
          if (typeof text === "string") b.textContent = text; else b.append(...text);
          b.addEventListener("click", onClick);
          return b;
        }
        function span(cls, text) { const e = document.createElement("span"); e.className = cls; e.textContent = text; return e; }
        function coverImg(id) {
          const img = document.createElement("img");
          img.alt = ""; img.loading = "lazy"; img.src = "/api/cover/" + id;
          img.onerror = () => { img.style.visibility = "hidden"; };
          return img;
        }

        function renderQueue(q) {
          queue = q.songs;
          const list = $("queue");
          const rows = queue.map((song, i) => {
            const li = document.createElement("li");
            li.dataset.id = song.id;
            li.draggable = true;
            const name = songName(song);
            const jump = button([span("t", name), span("d", fmt(song.duration))], "Play " + name, () => send("playid", song.id), "jump");
            const up = button("↑", "Move up " + name, () => send("moveid", [song.id, i - 1]), "small");
            const down = button("↓", "Move down " + name, () => send("moveid", [song.id, i + 1]), "small");
            up.disabled = i === 0; down.disabled = i === queue.length - 1;
            const remove = button("✕", "Remove " + name, () => send("deleteid", song.id), "remove small");
            li.append(jump, up, down, remove);
            // Drag and drop on a desktop: the dragged song takes the place of the one it is dropped on.
            li.addEventListener("dragstart", (e) => { e.dataTransfer.setData("text/plain", String(song.id)); e.dataTransfer.effectAllowed = "move"; });
            li.addEventListener("dragover", (e) => { e.preventDefault(); li.classList.add("drop"); });
            li.addEventListener("dragleave", () => li.classList.remove("drop"));
            li.addEventListener("drop", (e) => {
              e.preventDefault(); li.classList.remove("drop");
              const id = Number(e.dataTransfer.getData("text/plain"));
              if (Number.isInteger(id) && id !== song.id) send("moveid", [id, i]);
            });
            return li;
          });
          list.replaceChildren(...rows);
          markCurrent();
          // Keyboard users keep their place after a move.
          if (focusAfter) { const b = document.querySelector('[aria-label="' + CSS.escape(focusAfter) + '"]'); if (b && !b.disabled) b.focus(); focusAfter = null; }
        }
        let focusAfter = null;
        $("queue").addEventListener("click", (e) => {
          const b = e.target.closest("button.small");
          if (b && !b.classList.contains("remove")) focusAfter = b.getAttribute("aria-label");
        });
        $("clear").addEventListener("click", () => send("clear"));
        $("save").addEventListener("submit", (e) => {
          e.preventDefault();
          const name = $("save-name").value.trim();
          if (name) send("save", name).then((ok) => { if (ok) { $("save-name").value = ""; say("Saved as " + name + "."); } });
        });

        // The library: artists, their albums, an album's songs; or what the search finds.
        let view = { kind: "artists" }, searchSeq = 0;
        async function get(path) {
          const r = await fetch(path, { credentials: "same-origin" });
          if (r.status === 401) { location.href = "/login"; throw new Error("log in"); }
          const body = await r.json();
          if (!r.ok) throw new Error(body.error || r.statusText);
          return body;
        }
        const q = (o) => new URLSearchParams(o).toString();
        // Stars: five buttons, the rating's pressed; the rated star again clears it. The
        // library's rating (the song's `rating` sticker): every client sees it.
        function stars(song) {
          const box = document.createElement("span"); box.className = "stars";
          const name = songName(song);
          const paint = () => box.querySelectorAll("button").forEach((b, k) => {
            b.setAttribute("aria-pressed", k < song.rating ? "true" : "false");
            b.textContent = k < song.rating ? "★" : "☆";
          });
          for (let n = 1; n <= 5; n++) {
            box.append(button("☆", "Rate " + n + (n === 1 ? " star: " : " stars: ") + name, async () => {
              const to = song.rating === n ? 0 : n;
              focusAfter = "Rate " + n + (n === 1 ? " star: " : " stars: ") + name;
              if (await send("rate", [song.id, to])) { song.rating = to; paint(); }
            }));
          }
          paint();
          return box;
        }
        function plays(n) { return n ? n + (n === 1 ? " play" : " plays") : ""; }
        function songRows(songs) {
          return songs.map((song) => {
            const li = document.createElement("li");
            const info = document.createElement("span"); info.className = "info";
            info.append(span("t", song.title), span("sub", [song.artist, song.album, fmt(song.duration), plays(song.plays)].filter(Boolean).join(" · ")),
                        stars(song));
            li.append(info,
              button("Next", "Play next: " + songName(song), () => send("playnext", song.id), "small"),
              button("Add", "Add " + songName(song), () => send("add", song.id), "small"));
            return li;
          });
        }
        function crumbs() {
          const c = [];
          if (view.kind !== "artists" && view.kind !== "search") c.push(button("Artists", "All artists", () => show({ kind: "artists" }), "small"));
          if (view.kind === "songs") c.push(button(view.artist, "Albums of " + view.artist, () => show({ kind: "albums", artist: view.artist }), "small"));
          if (view.kind === "smart") c.push(span("t", view.name));
          $("crumbs").replaceChildren(...c);
        }
        async function show(v) {
          view = v;
          const seq = ++searchSeq;
          let rows = [];
          try {
            if (v.kind === "search") {
              const r = await get("/api/library/search?" + q({ q: v.text }));
              if (seq !== searchSeq) return;
              rows = r.songs.length ? songRows(r.songs) : [Object.assign(document.createElement("li"), { textContent: "Nothing found." })];
            } else if (v.kind === "artists") {
              const r = await get("/api/library/artists");
              if (seq !== searchSeq) return;
              rows = r.artists.map((a) => {
                const li = document.createElement("li");
                li.append(button([span("t", a)], "Artist " + a, () => show({ kind: "albums", artist: a }), "open"));
                return li;
              });
            } else if (v.kind === "albums") {
              const r = await get("/api/library/albums?" + q({ artist: v.artist }));
              if (seq !== searchSeq) return;
              rows = r.albums.map((a) => {
                const li = document.createElement("li");
                li.append(button([coverImg(a.cover), span("t", a.name || "(no album)")], "Album " + (a.name || "(no album)"),
                                 () => show({ kind: "songs", artist: v.artist, album: a.name }), "open"),
                          button("Add", "Add album " + (a.name || "(no album)"), () => addAlbum(v.artist, a.name), "small"));
                return li;
              });
            } else if (v.kind === "smart") {
              const r = await get("/api/library/smart?" + q({ name: v.name }));
              if (seq !== searchSeq) return;
              rows = r.songs.length ? songRows(r.songs) : [Object.assign(document.createElement("li"), { textContent: "No songs yet." })];
            } else {
              const r = await get("/api/library/songs?" + q({ artist: v.artist, album: v.album }));
              if (seq !== searchSeq) return;
              rows = songRows(r.songs);
            }
          } catch (e) {
            if (seq !== searchSeq) return;
            if (e.message.includes("no library")) $("library-section").hidden = true; else say(e.message);
            return;
          }
          $("library").replaceChildren(...rows);
          crumbs();
          // A keyboard user keeps their place when the list is drawn again (a rating pushed back).
          if (focusAfter) { const b = $("library").querySelector('[aria-label="' + CSS.escape(focusAfter) + '"]'); if (b) { b.focus(); focusAfter = null; } }
        }
        async function addAlbum(artist, album) {
          try {
            const r = await get("/api/library/songs?" + q({ artist, album }));
            if (r.songs.length) send("add", r.songs.map((s) => s.id));
          } catch (e) { say(e.message); }
        }
        let typing = 0;
        $("search").addEventListener("input", (e) => {
          clearTimeout(typing);
          const text = e.target.value.trim();
          typing = setTimeout(() => show(text ? { kind: "search", text } : { kind: "artists" }), 120);
        });

        // Stored playlists (load into the queue), then the library's smart ones: shown in the
        // library's list (its songs, with stars and plays), or all added to the queue.
        function renderPlaylists(p) {
          const stored = p.names.map((n) => {
            const li = document.createElement("li");
            li.append(span("t", n), button("Load", "Load playlist " + n, () => send("load", n), "small"));
            return li;
          });
          const smart = (p.smart || []).map((s) => {
            const li = document.createElement("li");
            li.append(button([span("t", s.name), span("sub", s.songs + (s.songs === 1 ? " song" : " songs"))], "Smart playlist " + s.name,
                             () => show({ kind: "smart", name: s.name }), "open"),
                      button("Add", "Add smart playlist " + s.name, () => addSmart(s.name), "small"));
            return li;
          });
          $("playlists").replaceChildren(...stored, ...smart);
        }
        async function addSmart(name) {
          try {
            const r = await get("/api/library/smart?" + q({ name }));
            if (r.songs.length) send("add", r.songs.map((s) => s.id));
          } catch (e) { say(e.message); }
        }
        // The player's equalizer preset (the outputs' `equalizer` attribute), shown when there is one.
        function renderEqualizer(o) {
          const eq = $("equalizer");
          $("equalizer-label").hidden = !o.equalizer;
          if (!o.equalizer) return;
          if (eq.options.length !== o.presets.length) eq.replaceChildren(...o.presets.map((p) => new Option(p, p)));
          if (document.activeElement !== eq) eq.value = o.equalizer;
        }
        function renderOutputs(o) {
          renderEqualizer(o);
          $("outputs").replaceChildren(...o.outputs.map((out) => {
            const li = document.createElement("li");
            const b = button(out.name + (out.enabled ? " · on" : " · off"), "Output " + out.name, () => send(out.enabled ? "disableoutput" : "enableoutput", out.id), "open");
            b.setAttribute("aria-pressed", String(out.enabled));
            li.append(b);
            // Several outputs: move playback to one (it on, the others off).
            if (o.outputs.length > 1) li.append(button("Only", "Play only on " + out.name, () => send("onlyoutput", out.id), "small"));
            return li;
          }));
          const sv = $("system-volume");
          $("system-volume-label").hidden = o.systemVolume == null;
          if (o.systemVolume != null && document.activeElement !== sv) sv.value = o.systemVolume;
        }

        $("playpause").addEventListener("click", () => send(state && state.state === "play" ? "pause" : "play"));
        $("previous").addEventListener("click", () => send("previous"));
        $("next").addEventListener("click", () => send("next"));
        $("repeat").addEventListener("click", () => send("repeat", !(state && state.repeat)));
        $("random").addEventListener("click", () => send("random", !(state && state.random)));
        const seek = $("seek");
        seek.addEventListener("input", () => { seeking = true; $("elapsed").textContent = fmt(Number(seek.value)); });
        seek.addEventListener("change", () => { seeking = false; base = Number(seek.value); baseAt = performance.now(); send("seek", Number(seek.value)); });
        $("crossfade").addEventListener("change", (e) => send("crossfade", Number(e.target.value)));
        $("equalizer").addEventListener("change", (e) => send("equalizer", e.target.value));
        $("system-volume").addEventListener("change", (e) => send("systemvolume", Number(e.target.value)));
        $("volume").addEventListener("change", (e) => send("volume", Number(e.target.value)));

        let retry = 500;
        function connect() {
          const ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws");
          ws.onopen = () => { retry = 500; say(""); };
          ws.onmessage = (ev) => {
            const m = JSON.parse(ev.data);
            if (m.type === "state") render(m);
            else if (m.type === "queue") renderQueue(m);
            else if (m.type === "outputs") renderOutputs(m);
            else if (m.type === "playlists") renderPlaylists(m);
            else if (m.type === "library" && view.kind !== "search") show(view);
            else if (m.type === "error") say(m.error);
          };
          ws.onclose = () => {
            say("Reconnecting to the daemon…");
            setTimeout(connect, retry);
            retry = Math.min(retry * 2, 10000);
          };
        }
        $("cover").onerror = () => { $("cover").hidden = true; };
        connect();
        show(view).catch(() => {});

        """

    /// The start of every page up to its body: the document, its title, the phone viewport,
    /// light and dark colours, and the one style sheet (served from the binary).
    static func head(title: String) -> String {
        """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="color-scheme" content="light dark">
        <title>\(title)</title>
        <link rel="stylesheet" href="/app.css">
        </head>

        """
    }

    /// The login form (the daemon's password; a wrong one says so).
    public static func login(failed: Bool) -> String {
        head(title: "Tonearm — log in") + """
        <body>
        <main>
        <h1>Tonearm</h1>
        <form method="post" action="/login">
          <label for="password">The daemon's password</label>
          <input id="password" name="password" type="password" autocomplete="current-password" required autofocus>
          <button type="submit">Log in</button>
          \(failed ? "<p id=\"status\" role=\"alert\">Wrong password.</p>" : "")
        </form>
        </main>
        </body>
        </html>

        """
    }
}
