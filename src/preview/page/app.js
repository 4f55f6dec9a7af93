// app.js - the preview page: plays the scene through GET /frame/N.png, follows
// GET /status.json for reloads and errors, draws overlays and the stats plot.
// The page talks to its own server only (docs/preview.md lists the API).
'use strict';

(() => {
  const $ = (id) => document.getElementById(id);
  const el = {
    picture: $('picture'), overlay: $('overlay'), stage: $('stage'), play: $('play'),
    timeline: $('timeline'), readout: $('readout'), mode: $('mode'), stretch: $('stretch'),
    cursor: $('cursor'),
    error: $('error'), errorKind: $('error-kind'), errorWhere: $('error-where'),
    errorSource: $('error-source'), errorText: $('error-text'), toast: $('toast'), busy: $('busy'),
    sceneName: $('scene-name'), sceneMeta: $('scene-meta'), gen: $('gen'), live: $('live'),
    plot: $('plot'), legend: $('plot-legend'), marks: $('marks'), rate: $('rate'),
    zoom: $('zoom'), draft: $('draft'), size: $('size'), errorNote: $('error-note'), errorFold: $('error-fold'), keys: $('keys'), copyCmd: $('copy-cmd'),
  };
  const POLL_MS = 50;        // /status.json: a save shows within this plus a render
  const STATS_POLL_MS = 500; // /stats.json while the worker is still simulating
  const GRAY_MODES = ['height', 'caustics', 'foam']; // the modes `stretch` applies to
  const stretchable = () => { el.stretch.disabled = !GRAY_MODES.includes(st.mode); };

  const st = {
    status: null,        // the last /status.json
    generation: 0,       // the scene generation the picture and overlays come from
    frame: 0,            // the frame shown
    playing: true,
    dir: 1,              // 1 forwards, -1 backwards (J)
    plotHover: null,     // the frame under the mouse on the plot
    mode: 'color',
    stretch: false,      // single-channel modes shown from black to white (display only)
    scene: null,         // /scene.json of that generation
    stats: null,
    wanted: null,        // a frame asked for by a seek, not yet shown
    shownKey: '',        // generation/mode/stretch/frame of the picture on screen
    errorKey: '',
  };
  // Editing (edit.js): the version of the file the page last loaded (an edit is made only
  // over it), the undo and redo stacks of splices, the handle under the mouse, the
  // selected one and the drag under way.
  const ed = {
    on: false, off: '', version: '', awaiting: '', undo: [], redo: [], handles: [], times: [],
    hover: null, selected: null, drag: null, edits: 0, noClick: false,
  };
  let wake = null;
  const poke = () => { if (wake) { const w = wake; wake = null; w(); } };
  const sleep = (ms) => new Promise((r) => { const t = setTimeout(r, ms); wake = () => { clearTimeout(t); r(); }; });

  const getJSON = async (url) => {
    const r = await fetch(url, { cache: 'no-store' });
    if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
    return r.json();
  };

  const frames = () => (st.status && st.status.frames) || 0;
  const fps = () => (st.status && st.status.fps) || 30;
  const timeOf = (f) => f / fps();

  function readout() {
    const n = frames();
    el.readout.textContent = `frame ${st.frame} / ${Math.max(0, n - 1)} · ${timeOf(st.frame).toFixed(3)} s`;
    if (document.activeElement !== el.timeline || !el.timeline.matches(':active')) el.timeline.value = st.frame;
    document.body.dataset.frame = st.frame;
  }

  function onMap() {
    const on = {};
    for (const k of ['drops', 'rain', 'boxes', 'emitters', 'tank']) on[k] = $(`ov-${k}`).checked;
    return on;
  }

  // The picture's display size: as wide as the column allows, at most 60% of the
  // window's height and twice its pixels, never smaller than fits.
  function fitPicture() {
    const w = el.picture.width, h = el.picture.height;
    const room = el.stage.parentElement.clientWidth;
    const k = Math.max(0.1, Math.min(room / w, (window.innerHeight * 0.6) / h, 2));
    el.picture.style.width = `${Math.floor(w * k)}px`;
    el.picture.style.height = `${Math.floor(h * k)}px`;
  }

  function drawOverlay() {
    const c = el.overlay;
    const dpr = window.devicePixelRatio || 1;
    // drawn at the zoomed size, so that its lines stay one pixel wide and sharp
    // (at most 16 M pixels: beyond that, lines widen a little instead)
    const k = Math.min(view.z, Math.sqrt(16e6 / Math.max(1, c.clientWidth * c.clientHeight * dpr * dpr)));
    const w = Math.max(1, Math.round(c.clientWidth * dpr * k));
    const h = Math.max(1, Math.round(c.clientHeight * dpr * k));
    if (c.width !== w || c.height !== h) { c.width = w; c.height = h; }
    const end = frames() / fps();
    const on = onMap();
    // floating boxes where the stats walk found them in this frame
    const poses = st.stats && st.stats.generation === st.generation && Array.isArray(st.stats.boxes)
      ? st.stats.boxes[st.frame] || null : null;
    document.body.dataset.posed = poses ? '1' : '0';
    Overlays.draw(c, st.scene, timeOf(st.frame), end, on, poses);
    const { out, times } = Editor.handles(st.scene, timeOf(st.frame), scenePerPx() / dpr, poses);
    ed.handles = out;
    ed.times = times;
    if (ed.on) Editor.draw(c, st.scene, out, on, ed.hover, ed.selected);
    drawMarks();
  }

  // Zoom and pan: the picture and overlay scaled by z about the stage's top left, moved by
  // (x, y) CSS pixels; never smaller than the stage, never leaving it uncovered.
  const view = { z: 1, x: 0, y: 0, pan: null };
  function setView(z, x, y) {
    const W = el.stage.clientWidth, H = el.stage.clientHeight;
    view.z = Math.max(1, Math.min(16, z));
    view.x = Math.min(0, Math.max(W - W * view.z, x));
    view.y = Math.min(0, Math.max(H - H * view.z, y));
    el.zoom.style.transform = view.z === 1 ? '' : `translate(${view.x}px, ${view.y}px) scale(${view.z})`;
    // whole pixels, not a blur, once each is two screen pixels or more
    const k = (el.picture.getBoundingClientRect().width / el.picture.width) * (window.devicePixelRatio || 1);
    el.picture.classList.toggle('sharp', k >= 2);
    document.body.dataset.zoom = String(Math.round(view.z * 100) / 100);
    drawOverlay();
  }
  // The wheel zooms about the mouse: the scene point under it stays under it.
  el.stage.addEventListener('wheel', (ev) => {
    ev.preventDefault();
    const r = el.stage.getBoundingClientRect();
    const mx = ev.clientX - r.left, my = ev.clientY - r.top;
    const z = Math.max(1, Math.min(16, view.z * Math.exp(-ev.deltaY * 0.002)));
    setView(z, mx - (mx - view.x) * z / view.z, my - (my - view.y) * z / view.z);
  }, { passive: false });

  // Scene units per CSS pixel of the picture.
  function scenePerPx() {
    const r = el.overlay.getBoundingClientRect();
    const rw = (st.status && st.status.ref_width) || el.picture.width;
    return r.width ? rw / r.width : 1;
  }

  // The timeline's marks: a tick at each drop's and keyframe's time, above the slider
  // (where its thumb travels: MARK_PAD CSS pixels in from each end).
  const MARK_PAD = 8;
  const COLORS = { drop: '#ffd666', box: '#ff8c5a', tank: '#d2a0ff' };
  function markX(t, w) {
    const n = Math.max(1, frames() - 1);
    return MARK_PAD + (t * fps() / n) * (w - 2 * MARK_PAD);
  }
  function markT(x, w) {
    const n = Math.max(1, frames() - 1);
    const f = Math.round(((x - MARK_PAD) / (w - 2 * MARK_PAD)) * n);
    return Math.max(0, Math.min(n, f)) / fps();
  }
  function drawMarks() {
    const c = el.marks;
    const dpr = window.devicePixelRatio || 1;
    const w = Math.max(1, Math.round(c.clientWidth * dpr)), h = Math.max(1, Math.round(c.clientHeight * dpr));
    if (c.width !== w || c.height !== h) { c.width = w; c.height = h; }
    const ctx = c.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, w, h);
    const on = onMap();
    for (const m of ed.times) {
      if (!on[m.overlay]) continue;
      const x = Math.round(markX(m.t, c.clientWidth)) + 0.5;
      const sel = ed.selected && ed.selected.label === m.label;
      ctx.strokeStyle = COLORS[m.kind] || '#fff';
      ctx.lineWidth = sel ? 3 : 1.5;
      ctx.beginPath();
      ctx.moveTo(x, m.kind === 'drop' ? 2 : 6);
      ctx.lineTo(x, c.clientHeight - 1);
      ctx.stroke();
    }
  }

  function drawPlot() {
    const em = st.scene && Array.isArray(st.scene.emitters) ? st.scene.emitters : [];
    const end = frames() / fps();
    const spans = em.filter((e) => e && e.type === 'rain').map((e) => [
      typeof e.from === 'number' ? e.from : 0, typeof e.to === 'number' ? e.to : end]);
    Plot.draw(el.plot, el.legend, st.stats, st.frame, { hover: st.plotHover, fps: fps(), marks: ed.times, spans });
  }

  // A frame that takes a while (a reload simulating from far back, a seek past the
  // checkpoints) says so in a corner, so a slow answer is not mistaken for a stuck page.
  const BUSY_MS = 250;
  // Frames asked for ahead of the one shown while playing: the server renders the next
  // while the page decodes (createImageBitmap, off the main thread) and shows this one.
  const AHEAD = 4;

  // Frames asked for, by key (mode/stretch/frame): a promise of {bmp, gen} or null.
  const inflight = new Map();
  const frameKey = (n) => {
    const stretch = st.stretch && GRAY_MODES.includes(st.mode);
    return `${st.mode}/${stretch ? 1 : 0}/${n}`;
  };
  function requestFrame(n) {
    const key = frameKey(n);
    if (inflight.has(key)) return inflight.get(key);
    const [mode, stretch] = key.split('/');
    const p = fetch(`/frame/${n}.png?mode=${encodeURIComponent(mode)}${stretch === '1' ? '&stretch=1' : ''}`,
      { cache: 'no-store' })
      .then(async (r) => {
        if (!r.ok) return null;
        const gen = Number(r.headers.get('X-Tidepool-Generation')) || 0;
        return { bmp: await createImageBitmap(await r.blob()), gen, key };
      })
      .catch(() => null);
    inflight.set(key, p);
    return p;
  }
  // Forgets every frame asked for (a seek, a reload, another mode); those still coming
  // are closed when they come.
  function dropFrames(keep) {
    for (const [k, p] of inflight) {
      if (k === keep) continue;
      inflight.delete(k);
      p.then((f) => { if (f) f.bmp.close(); });
    }
  }

  async function showFrame(n) {
    const busy = setTimeout(() => {
      el.busy.textContent = `simulating to frame ${n}…`;
      el.busy.hidden = false;
      document.body.dataset.busy = 'yes';
    }, BUSY_MS);
    try {
      const key = frameKey(n);
      const f = await requestFrame(n);
      inflight.delete(key);
      if (!f) { await pollStatus(); return false; } // a runtime failure, or a stale number
      if (f.gen < st.generation) { // from before a reload: ask again
        f.bmp.close();
        if (st.wanted === null) st.wanted = n;
        return false;
      }
      draw(f, n);
      return true;
    } finally {
      clearTimeout(busy);
      el.busy.hidden = true;
      document.body.dataset.busy = '';
    }
  }

  function draw(f, n) {
    const bmp = f.bmp;
    if (el.picture.width !== bmp.width || el.picture.height !== bmp.height) {
      el.picture.width = bmp.width;
      el.picture.height = bmp.height;
      fitPicture();
    }
    el.picture.getContext('2d').drawImage(bmp, 0, 0);
    bmp.close();
    st.frame = n;
    st.shownGen = Math.max(st.shownGen || 0, f.gen);
    el.draft.hidden = true;
    st.shownKey = `${f.gen}/${f.key}`;
    document.body.dataset.shownGeneration = String(f.gen);
    readout();
    drawOverlay();
    drawPlot();
  }

  // After a save, the full frame may take a while (simulating again from far back): if it
  // has not come within DRAFT_MS, the draft (the same scene simulated at a quarter of the
  // size, GET /frame/N.png?draft=1) is shown scaled up and marked, until it comes.
  const DRAFT_MS = 50;
  function draftAfterReload(n, gen) {
    setTimeout(async () => {
      if ((st.shownGen || 0) >= gen || (st.stretch && GRAY_MODES.includes(st.mode))) return;
      try {
        const r = await fetch(`/frame/${n}.png?draft=1&mode=${encodeURIComponent(st.mode)}`, { cache: 'no-store' });
        if (!r.ok) return;
        const g = Number(r.headers.get('X-Tidepool-Generation')) || 0;
        const bmp = await createImageBitmap(await r.blob());
        if (g !== gen || (st.shownGen || 0) >= gen || st.frame !== n) { bmp.close(); return; }
        const ctx = el.picture.getContext('2d');
        ctx.imageSmoothingEnabled = true;
        ctx.drawImage(bmp, 0, 0, el.picture.width, el.picture.height);
        bmp.close();
        el.draft.hidden = false;
        document.body.dataset.draftGeneration = String(gen);
      } catch (e) { /* the full frame comes anyway */ }
    }, DRAFT_MS);
  }

  // The rate the page achieves while playing: frames shown over the last second or so.
  const shown = [];
  let played = 0; // frames shown while playing, since the page opened (make bench reads it)
  function countShown(now) {
    shown.push(now);
    document.body.dataset.played = String(++played);
    while (shown.length > 2 && now - shown[0] > 1500) shown.shift();
    if (shown.length < 8 || now - shown[0] < 900) return;
    const rate = (shown.length - 1) * 1000 / (now - shown[0]);
    const slow = rate < fps() * 0.95;
    el.rate.textContent = `${rate.toFixed(1)} fps${slow ? ` · slower than real time (${fps()} fps)` : ''}`;
    el.rate.classList.toggle('slow', slow);
    document.body.dataset.rate = rate.toFixed(2);
    document.body.dataset.slow = slow ? '1' : '0';
  }
  function stopCounting() {
    shown.length = 0;
    el.rate.textContent = '';
    el.rate.classList.remove('slow');
    document.body.dataset.slow = '';
  }

  const failedNext = () => st.status.error && st.status.error.kind === 'runtime'
    && st.status.error.frame === (st.frame + 1) % frames();

  // The frame pump: a seek wins over playing on; playing keeps AHEAD frames asked for
  // and shows each at its time (the scene's rate), or as soon as it comes when late.
  async function pump() {
    let due = 0;
    for (;;) {
      let n = null;
      if (st.wanted !== null) {
        n = st.wanted; st.wanted = null;
        dropFrames(frameKey(n));
        due = 0;
        stopCounting();
      } else if (st.playing && frames() > 0 && !failedNext()) {
        const N = frames();
        n = (st.frame + st.dir + N) % N;
        for (let k = 1; k < AHEAD; k++) requestFrame((n + k * st.dir + k * N) % N);
      }
      if (n === null) { stopCounting(); await sleep(1000); continue; }
      let ok = false;
      try { ok = await showFrameAt(n, due); } catch (e) { ok = false; }
      if (!ok) { due = 0; await sleep(250); continue; }
      const now = performance.now();
      if (st.playing && st.wanted === null) {
        countShown(now);
        due = Math.max(due + 1000 / fps(), now); // late frames do not pile up
      }
    }
  }

  // Waits for frame n, then for its time (due, performance.now() units; 0: now).
  async function showFrameAt(n, due) {
    const f = requestFrame(n);
    if (due) {
      await f;
      const left = due - performance.now();
      if (left > 1 && st.wanted === null) await sleep(left);
      if (st.wanted !== null) return true; // a seek came meanwhile: it goes first
    }
    return showFrame(n);
  }

  function setModes(modes) {
    const have = Array.from(el.mode.options).map((o) => o.value).join();
    if (have === modes.join()) return;
    el.mode.textContent = '';
    for (const m of modes) el.mode.append(new Option(m, m, false, m === st.mode));
    if (!modes.includes(st.mode)) { st.mode = modes[0] || 'color'; el.mode.value = st.mode; }
    stretchable();
  }

  function showError(err) {
    const key = err ? err.text + '|' + err.frame : '';
    if (key === st.errorKey) return;
    st.errorKey = key;
    el.live.classList.toggle('bad', !!err);
    if (!err) { el.error.hidden = true; document.body.dataset.error = ''; return; }
    el.errorKind.textContent = err.kind === 'runtime' ? `Frame ${err.frame} failed` : 'Scene error';
    el.errorNote.textContent = st.status && st.status.loaded ? 'showing the last good picture'
      : 'no picture yet: the scene has not loaded since the preview started';
    el.errorWhere.textContent = err.line > 0 ? `${err.file}:${err.line}:${err.col}` : err.file || '';
    let src = '';
    if (err.source_line !== null && err.source_line !== undefined) {
      const num = `${err.line} | `;
      src = num + err.source_line;
      // the caret under column col (characters, a tab one): the line's own tabs are kept
      // so that it lines up however wide they show; the block does not wrap
      if (err.col > 0) {
        const before = Array.from(err.source_line).slice(0, err.col - 1);
        src += '\n' + ' '.repeat(num.length) + before.map((c) => (c === '\t' ? '\t' : ' ')).join('') + '^';
      }
    }
    el.errorSource.textContent = src;
    el.errorText.textContent = `tidepool: ${err.text}`;
    el.error.hidden = false;
    document.body.dataset.error = err.line > 0 ? `${err.line}:${err.col}` : 'yes';
  }

  // /scene.json, with the version of its text and whether the page may edit it. A version
  // older than the page's own last edit (a reload that began before it) is not taken.
  // The overlay toggles the scene has something for (a pond has no tank).
  function showToggles(sc) {
    const a = (v) => (Array.isArray(v) ? v : []);
    const em = a(sc && sc.emitters);
    const has = {
      drops: a(sc && sc.drops).length > 0,
      rain: em.some((e) => e && e.type === 'rain'),
      boxes: a(sc && sc.boxes).length > 0,
      emitters: em.some((e) => e && e.type === 'stream'),
      tank: !!(sc && ((sc.tank && typeof sc.tank === 'object') || a(sc.blocks).length)),
    };
    for (const k of Object.keys(has)) $(`ov-${k}`).parentElement.hidden = !has[k];
    document.body.dataset.toggles = Object.keys(has).filter((k) => has[k]).join(' ');
  }

  async function loadScene() {
    try {
      const r = await fetch('/scene.json', { cache: 'no-store' });
      if (!r.ok) throw new Error(`/scene.json: HTTP ${r.status}`);
      st.scene = await r.json();
      showToggles(st.scene);
      // After an edit, the version its answer gave holds until the server has loaded that
      // very text: a /scene.json answered before the reload (its status poll may run
      // between the write and the reload, which takes longer on a busy machine) still has
      // the old version, and an undo sent over it would be refused as a change on disk.
      const v = r.headers.get('X-Tidepool-Version') || '';
      if (!ed.awaiting || v === ed.awaiting) { ed.version = v; ed.awaiting = ''; }
      const edit = r.headers.get('X-Tidepool-Edit') || '';
      ed.on = edit === 'on';
      ed.off = ed.on ? '' : edit;
      document.body.dataset.editable = ed.on ? '1' : '0';
      document.body.dataset.version = ed.version;
    } catch (e) { st.scene = null; }
    drawOverlay();
  }

  // The stats of the last scene stay on the plot until the new ones come: after an edit
  // that changes nothing the simulation reads (a colour), they are the same and complete.
  async function loadSceneAndStats() {
    await loadScene();
    pollStats();
  }

  // POST /edit: ops over the version the page loaded. Returns the answer, or null after
  // saying why not (a file changed on disk: the page loads it as it is now).
  async function sendEdit(ops, label) {
    if (!ed.on) { toast(`editing is off: ${ed.off}`); return null; }
    let r, a;
    try {
      r = await fetch('/edit', { method: 'POST', cache: 'no-store', headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ version: ed.version, ops }) });
      a = await r.json();
    } catch (e) { toast(`${label}: not saved (${e.message})`); return null; }
    if (!r.ok) {
      document.body.dataset.editError = a.error || `HTTP ${r.status}`;
      toast(`${label}: not saved: ${a.error || r.status}`, 4000);
      if (r.status === 409) { ed.undo = []; ed.redo = []; ed.awaiting = ''; loadScene(); }
      return null;
    }
    ed.version = a.version;
    ed.awaiting = a.version;
    ed.edits++;
    document.body.dataset.version = ed.version;
    document.body.dataset.edits = ed.edits;
    document.body.dataset.editError = '';
    return a;
  }

  // Edits, undos and redos go one after the other, each over the version the one before
  // left (a key pressed while an edit is on its way waits for it).
  let queue = Promise.resolve();
  const enqueue = (fn) => { queue = queue.then(fn, fn); return queue; };

  function edit(ops, label) {
    return enqueue(async () => {
      const a = await sendEdit(ops, label);
      if (a) { ed.undo.push({ back: a.undo, fwd: a.redo, label }); ed.redo = []; toast(label); }
    });
  }

  // Undo and redo send the splices the server answered with: byte for byte back.
  function undoRedo(redo) {
    return enqueue(async () => {
      const from = redo ? ed.redo : ed.undo, to = redo ? ed.undo : ed.redo;
      if (!from.length) { toast(redo ? 'nothing to redo' : 'nothing to undo'); return; }
      const e = from.pop();
      const a = await sendEdit(redo ? e.fwd : e.back, `${redo ? 'redo' : 'undo'} ${e.label}`);
      if (a) {
        to.push({ back: redo ? a.undo : a.redo, fwd: redo ? a.redo : a.undo, label: e.label });
        toast(`${redo ? 'redo' : 'undo'} ${e.label}`);
      } else if (ed.undo.length || ed.redo.length) {
        from.push(e); // not a 409 (which empties both): it may be tried again
      }
    });
  }

  let statsTimer = null;
  async function pollStats() {
    clearTimeout(statsTimer);
    statsTimer = null;
    try {
      const s = await getJSON('/stats.json');
      if (s.generation === st.generation) st.stats = s;
      document.body.dataset.statsDone = st.stats ? `${st.stats.generation}/${st.stats.done}` : '';
      drawPlot();
      if (s.done < s.frames) statsTimer = setTimeout(pollStats, STATS_POLL_MS);
    } catch (e) {
      statsTimer = setTimeout(pollStats, STATS_POLL_MS * 4);
    }
  }

  async function pollStatus() {
    let s;
    try { s = await getJSON('/status.json'); } catch (e) { return; }
    const prev = st.status;
    st.status = s;
    el.gen.textContent = s.generation;
    document.body.dataset.generation = s.generation;
    showError(s.error);
    if (!s.loaded) return;
    if (s.scene_generation !== st.generation) { // a good load: the new scene
      // at the same time position
      const t = prev && prev.loaded ? st.frame / (prev.fps || 30) : 0;
      st.generation = s.scene_generation;
      el.sceneName.textContent = s.scene;
      el.sceneMeta.textContent = `${s.solver} · ${s.width}×${s.height} · ${s.frames} frames at ${s.fps} fps`;
      el.timeline.max = Math.max(0, s.frames - 1);
      setModes(s.modes);
      st.frame = Math.min(Math.round(t * s.fps), s.frames - 1);
      st.wanted = st.frame;
      if (prev && prev.loaded) draftAfterReload(st.frame, s.scene_generation);
      readout();
      loadSceneAndStats();
      poke();
    }
    if (st.stats && s.stats_done > st.stats.done && !statsTimer) pollStats();
  }

  function togglePlay(on, dir) {
    st.playing = on === undefined ? !st.playing : on;
    if (dir) st.dir = dir;
    document.body.dataset.dir = st.dir;
    el.play.textContent = st.playing ? 'Pause' : 'Play';
    document.body.dataset.playing = st.playing ? '1' : '0';
    poke();
  }

  function seek(n) {
    if (!frames()) return;
    st.wanted = Math.max(0, Math.min(frames() - 1, n | 0));
    st.frame = st.wanted;
    readout();
    drawOverlay();
    drawPlot();
    poke();
  }

  function sceneXY(ev) {
    const r = el.overlay.getBoundingClientRect();
    const rw = (st.status && st.status.ref_width) || el.picture.width;
    const rh = (st.status && st.status.ref_height) || el.picture.height;
    return [Math.round((ev.clientX - r.left) / r.width * rw), Math.round((ev.clientY - r.top) / r.height * rh)];
  }

  let toastTimer = null;
  function toast(text, ms) {
    el.toast.textContent = text;
    el.toast.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => { el.toast.hidden = true; }, ms || 1500);
  }

  async function copy(text) {
    try {
      await navigator.clipboard.writeText(text);
    } catch (e) { // no clipboard permission: the old way
      const ta = document.createElement('textarea');
      ta.value = text;
      document.body.append(ta);
      ta.select();
      document.execCommand('copy');
      ta.remove();
    }
    document.body.dataset.copied = text;
    toast(`copied ${text}`);
  }

  el.play.addEventListener('click', () => togglePlay());
  el.timeline.addEventListener('input', () => { togglePlay(false); seek(Number(el.timeline.value)); });
  el.mode.addEventListener('change', () => { st.mode = el.mode.value; stretchable(); seek(st.frame); });
  // The preview size chosen on the page: the server loads the scene again at it.
  el.size.addEventListener('change', async () => {
    const v = el.size.value;
    try {
      const r = await fetch('/size', { method: 'POST', cache: 'no-store', headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(v === 'fit' ? { fit: true } : { scale: Number(v) }) });
      const a = await r.json();
      if (!r.ok) toast(`size: ${a.error}`, 4000);
      else toast(v === 'fit' ? 'size: fitted into 640×360' : `size: ${v}× the scene's`);
    } catch (e) { toast(`size: ${e.message}`); }
    el.size.blur();
  });
  el.stretch.addEventListener('change', () => { st.stretch = el.stretch.checked; seek(st.frame); });
  for (const k of ['drops', 'rain', 'boxes', 'emitters', 'tank']) $(`ov-${k}`).addEventListener('change', drawOverlay);
  el.overlay.addEventListener('mousemove', (ev) => {
    const [x, y] = sceneXY(ev);
    el.cursor.textContent = `x ${x}  y ${y}`;
  });
  el.overlay.addEventListener('mouseleave', () => { el.cursor.textContent = 'x –  y –'; });
  el.overlay.addEventListener('click', (ev) => {
    if (ed.noClick) { ed.noClick = false; return; } // the end of a drag, or a handle picked
    const [x, y] = sceneXY(ev);
    copy(`[${x}, ${y}]`);
  });

  // Dragging a handle: the page's copy of the scene follows the mouse, the file is
  // written once, when the button is released.
  const sceneXYf = (ev) => {
    const r = el.overlay.getBoundingClientRect(), k = scenePerPx();
    return [(ev.clientX - r.left) * k, (ev.clientY - r.top) * k];
  };
  const HIT_PX = 9;
  const select = (h) => { ed.selected = h; document.body.dataset.selected = h ? h.label : ''; drawOverlay(); };
  function dragTo(ops) {
    for (const o of ops) Editor.setLocal(st.scene, o.path, o.value);
    ed.drag.ops = ops;
    ed.drag.moved = true;
    document.body.dataset.dragValue = JSON.stringify(ops.map((o) => o.value));
    drawOverlay();
  }
  async function dragEnd() {
    const d = ed.drag;
    ed.drag = null;
    if (!d || !d.moved) return;
    await edit(d.ops.map((o) => ({ op: 'replace', path: o.path, value: o.value })), `moved ${d.h.label}`);
  }
  el.overlay.addEventListener('pointerdown', (ev) => {
    if (ev.button !== 0) return;
    const [x, y] = sceneXYf(ev);
    const h = ed.on ? Editor.hit(ed.handles, x, y, HIT_PX * scenePerPx(), onMap()) : null;
    if (!h) {
      if (ed.on) select(null);
      if (view.z > 1) { // a drag on the picture pans it
        view.pan = { x0: ev.clientX, y0: ev.clientY, vx: view.x, vy: view.y, moved: false };
        el.overlay.setPointerCapture(ev.pointerId);
      }
      return;
    }
    ev.preventDefault();
    el.overlay.setPointerCapture(ev.pointerId);
    ed.drag = { h, moved: false, ops: [] };
    ed.noClick = true;
    select(h);
  });
  el.overlay.addEventListener('pointermove', (ev) => {
    if (view.pan) {
      const p = view.pan, dx = ev.clientX - p.x0, dy = ev.clientY - p.y0;
      if (Math.abs(dx) + Math.abs(dy) > 3) { p.moved = true; ed.noClick = true; }
      if (p.moved) setView(view.z, p.vx + dx, p.vy + dy);
      return;
    }
    if (!ed.on) return;
    const [x, y] = sceneXYf(ev);
    if (ed.drag) { dragTo(ed.drag.h.drag(x, y)); return; }
    const h = Editor.hit(ed.handles, x, y, HIT_PX * scenePerPx(), onMap());
    el.overlay.style.cursor = h ? 'grab' : '';
    if (h !== ed.hover) { ed.hover = h; drawOverlay(); }
  });
  el.overlay.addEventListener('pointerup', () => { view.pan = null; dragEnd(); });
  el.overlay.addEventListener('pointercancel', dragEnd);
  // A double click adds a drop there at the current time, like its neighbour in time.
  el.overlay.addEventListener('dblclick', (ev) => {
    if (!ed.on || !st.scene) return;
    const [x, y] = sceneXY(ev);
    const t = Editor.roundT(timeOf(st.frame));
    const drops = Array.isArray(st.scene.drops) ? st.scene.drops : null;
    let i = drops ? drops.findIndex((d) => typeof d.t === 'number' && d.t > t) : -1;
    if (drops && i < 0) i = drops.length;
    const like = drops && drops.length ? drops[Math.min(i, drops.length - 1)] : { radius: 8, strength: 4 };
    const drop = Object.assign({}, like, { t, at: [x, y] });
    edit(drops ? [{ op: 'add', path: `/drops/${i}`, value: drop }] : [{ op: 'add', path: '/drops', value: [drop] }],
      `added a drop at [${x}, ${y}], t ${t}`);
  });

  // The timeline's marks: drag one to change its time.
  el.marks.addEventListener('pointerdown', (ev) => {
    if (ev.button !== 0) return;
    const r = el.marks.getBoundingClientRect(), x = ev.clientX - r.left, on = onMap();
    let best = null, bd = 7;
    for (const m of ed.times) {
      const d = Math.abs(markX(m.t, r.width) - x);
      if (on[m.overlay] && d <= bd) { best = m; bd = d; }
    }
    if (!best) return;
    select(best);
    if (!ed.on) return;
    ev.preventDefault();
    el.marks.setPointerCapture(ev.pointerId);
    ed.drag = { h: best, moved: false, ops: [], marks: true };
  });
  el.marks.addEventListener('pointermove', (ev) => {
    if (!ed.drag || !ed.drag.marks) return;
    const r = el.marks.getBoundingClientRect();
    const t = markT(ev.clientX - r.left, r.width);
    dragTo(ed.drag.h.drag(t));
    togglePlay(false);
    seek(Math.round(t * fps()));
  });
  el.marks.addEventListener('pointerup', dragEnd);
  el.marks.addEventListener('pointercancel', dragEnd);
  el.plot.addEventListener('click', (ev) => { togglePlay(false); seek(Plot.frameAt(el.plot, ev.clientX, frames())); });
  el.plot.addEventListener('mousemove', (ev) => {
    st.plotHover = frames() ? Plot.frameAt(el.plot, ev.clientX, frames()) : null;
    document.body.dataset.plotHover = st.plotHover;
    drawPlot();
  });
  el.plot.addEventListener('mouseleave', () => { st.plotHover = null; drawPlot(); });
  document.addEventListener('keydown', (ev) => {
    if (ev.target === el.mode || ev.target === el.stretch) return;
    const ctrl = ev.ctrlKey || ev.metaKey;
    if (ctrl && (ev.key === 'z' || ev.key === 'Z')) { ev.preventDefault(); undoRedo(ev.shiftKey); return; }
    if (ctrl && ev.key === 'y') { ev.preventDefault(); undoRedo(true); return; }
    if ((ev.key === 'Delete' || ev.key === 'Backspace') && ed.selected) {
      ev.preventDefault();
      const h = ed.selected.handle || ed.selected;
      if (h.del) { select(null); edit(h.del, `deleted ${h.label}`); } else toast(`${h.label} cannot be deleted`);
      return;
    }
    if (ev.key === 'Escape') { select(null); return; }
    // the slider steps on its own too: the page's step only (one frame per key)
    if (ev.target === el.timeline && ev.key.startsWith('Arrow')) ev.preventDefault();
    if (ev.key === ' ') { ev.preventDefault(); togglePlay(undefined, 1); }
    else if (ev.key === 'ArrowRight') { togglePlay(false); seek(st.frame + 1); }
    else if (ev.key === 'ArrowLeft') { togglePlay(false); seek(st.frame - 1); }
    else if (ev.key === 'Home') { ev.preventDefault(); togglePlay(false); seek(0); }
    else if (ev.key === 'End') { ev.preventDefault(); togglePlay(false); seek(frames() - 1); }
    else if (ev.key === 'j' || ev.key === 'J') togglePlay(true, -1);
    else if (ev.key === 'k' || ev.key === 'K') togglePlay(false);
    else if (ev.key === 'l' || ev.key === 'L') togglePlay(true, 1);
    else if (ev.key === '?') el.keys.hidden = !el.keys.hidden;
    else if (ev.key === '0') setView(1, 0, 0);
  });
  el.errorFold.addEventListener('click', () => {
    const folded = el.error.classList.toggle('folded');
    el.errorFold.textContent = folded ? 'show' : 'hide';
    el.errorFold.setAttribute('aria-expanded', String(!folded));
  });
  $('keys-close').addEventListener('click', () => { el.keys.hidden = true; });
  $('keys-open').addEventListener('click', () => { el.keys.hidden = !el.keys.hidden; });
  // The command that renders the file as it is now (with the page's edits in it).
  const quote = (a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, "'\\''")}'`);
  el.copyCmd.addEventListener('click', () => {
    if (st.status) copy(`tidepool render ${quote(st.status.scene)}`);
  });
  window.addEventListener('resize', () => { fitPicture(); drawOverlay(); drawPlot(); });

  // The secret came in the URL and is now in the page's cookie: off the address bar (and
  // out of screenshots and shared screens).
  if (new URLSearchParams(location.search).has('token')) history.replaceState(null, '', '/');
  document.body.dataset.playing = '1';
  fitPicture();
  (async () => {
    await pollStatus();
    setInterval(pollStatus, POLL_MS);
    pump();
  })();
})();
