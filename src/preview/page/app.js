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
    plot: $('plot'), legend: $('plot-legend'),
  };
  const POLL_MS = 100;       // /status.json: a save shows within this plus a render
  const STATS_POLL_MS = 500; // /stats.json while the worker is still simulating
  const GRAY_MODES = ['height', 'caustics', 'foam']; // the modes `stretch` applies to
  const stretchable = () => { el.stretch.disabled = !GRAY_MODES.includes(st.mode); };

  const st = {
    status: null,        // the last /status.json
    generation: 0,       // the scene generation the picture and overlays come from
    frame: 0,            // the frame shown
    playing: true,
    mode: 'color',
    stretch: false,      // single-channel modes shown from black to white (display only)
    scene: null,         // /scene.json of that generation
    stats: null,
    wanted: null,        // a frame asked for by a seek, not yet shown
    shownKey: '',        // generation/mode/stretch/frame of the picture on screen
    errorKey: '',
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
    const w = Math.max(1, Math.round(c.clientWidth * dpr)), h = Math.max(1, Math.round(c.clientHeight * dpr));
    if (c.width !== w || c.height !== h) { c.width = w; c.height = h; }
    const end = frames() / fps();
    Overlays.draw(c, st.scene, timeOf(st.frame), end, onMap());
  }

  function drawPlot() {
    Plot.draw(el.plot, el.legend, st.stats, st.frame);
  }

  // A frame that takes a while (a reload simulating from far back, a seek past the
  // checkpoints) says so in a corner, so a slow answer is not mistaken for a stuck page.
  const BUSY_MS = 250;

  async function showFrame(n) {
    const gen = st.generation;
    const busy = setTimeout(() => {
      el.busy.textContent = `simulating to frame ${n}…`;
      el.busy.hidden = false;
      document.body.dataset.busy = 'yes';
    }, BUSY_MS);
    try {
      return await fetchFrame(n, gen);
    } finally {
      clearTimeout(busy);
      el.busy.hidden = true;
      document.body.dataset.busy = '';
    }
  }

  async function fetchFrame(n, gen) {
    const stretch = st.stretch && GRAY_MODES.includes(st.mode);
    const r = await fetch(`/frame/${n}.png?mode=${encodeURIComponent(st.mode)}${stretch ? '&stretch=1' : ''}`,
      { cache: 'no-store' });
    if (!r.ok) { // a runtime failure (shown from /status.json) or a stale frame number
      await pollStatus();
      return false;
    }
    const bmp = await createImageBitmap(await r.blob());
    if (gen !== st.generation && st.wanted === null) st.wanted = n; // reloaded meanwhile
    if (el.picture.width !== bmp.width || el.picture.height !== bmp.height) {
      el.picture.width = bmp.width;
      el.picture.height = bmp.height;
      fitPicture();
    }
    el.picture.getContext('2d').drawImage(bmp, 0, 0);
    bmp.close();
    st.frame = n;
    st.shownKey = `${r.headers.get('X-Tidepool-Generation')}/${st.mode}/${stretch}/${n}`;
    document.body.dataset.shownGeneration = r.headers.get('X-Tidepool-Generation') || '';
    readout();
    drawOverlay();
    drawPlot();
    return true;
  }

  // The frame pump: one request at a time; a seek wins over playing on.
  async function pump() {
    for (;;) {
      let n = null;
      if (st.wanted !== null) { n = st.wanted; st.wanted = null; }
      else if (st.playing && frames() > 0 && !(st.status.error && st.status.error.kind === 'runtime'
        && st.status.error.frame === (st.frame + 1) % frames())) n = (st.frame + 1) % frames();
      if (n === null) { await sleep(1000); continue; }
      const t0 = performance.now();
      let ok = false;
      try { ok = await showFrame(n); } catch (e) { ok = false; }
      if (!ok) { await sleep(250); continue; }
      if (st.playing && st.wanted === null) {
        const left = 1000 / fps() - (performance.now() - t0);
        if (left > 1) await sleep(left);
      }
    }
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
    el.errorWhere.textContent = err.line > 0 ? `${err.file}:${err.line}:${err.col}` : err.file || '';
    let src = '';
    if (err.source_line !== null && err.source_line !== undefined) {
      const num = `${err.line} | `;
      src = num + err.source_line;
      if (err.col > 0) src += '\n' + ' '.repeat(num.length + err.col - 1) + '^';
    }
    el.errorSource.textContent = src;
    el.errorText.textContent = `tidepool: ${err.text}`;
    el.error.hidden = false;
    document.body.dataset.error = err.line > 0 ? `${err.line}:${err.col}` : 'yes';
  }

  async function loadSceneAndStats() {
    try { st.scene = await getJSON('/scene.json'); } catch (e) { st.scene = null; }
    st.stats = null;
    pollStats();
  }

  let statsTimer = null;
  async function pollStats() {
    clearTimeout(statsTimer);
    statsTimer = null;
    try {
      const s = await getJSON('/stats.json');
      if (s.generation === st.generation) st.stats = s;
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
      readout();
      loadSceneAndStats();
      poke();
    }
    if (st.stats && s.stats_done > st.stats.done && !statsTimer) pollStats();
  }

  function togglePlay(on) {
    st.playing = on === undefined ? !st.playing : on;
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
  function toast(text) {
    el.toast.textContent = text;
    el.toast.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => { el.toast.hidden = true; }, 1500);
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
  el.stretch.addEventListener('change', () => { st.stretch = el.stretch.checked; seek(st.frame); });
  for (const k of ['drops', 'rain', 'boxes', 'emitters', 'tank']) $(`ov-${k}`).addEventListener('change', drawOverlay);
  el.overlay.addEventListener('mousemove', (ev) => {
    const [x, y] = sceneXY(ev);
    el.cursor.textContent = `x ${x}  y ${y}`;
  });
  el.overlay.addEventListener('mouseleave', () => { el.cursor.textContent = 'x –  y –'; });
  el.overlay.addEventListener('click', (ev) => { const [x, y] = sceneXY(ev); copy(`[${x}, ${y}]`); });
  el.plot.addEventListener('click', (ev) => { togglePlay(false); seek(Plot.frameAt(el.plot, ev.clientX, frames())); });
  document.addEventListener('keydown', (ev) => {
    if (ev.target === el.mode || ev.target === el.stretch) return;
    if (ev.key === ' ') { ev.preventDefault(); togglePlay(); }
    else if (ev.key === 'ArrowRight') { togglePlay(false); seek(st.frame + 1); }
    else if (ev.key === 'ArrowLeft') { togglePlay(false); seek(st.frame - 1); }
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
