// plot.js - the solver's --stats fields over time (GET /stats.json), each line scaled
// to its own range, with the current frame marked. The legend gives each field's value
// at the current frame.
'use strict';

const Plot = (() => {
  const COLORS = ['#4fb3d9', '#ffb454', '#8be28b', '#e27dd0', '#f07178', '#c3e88d', '#89ddff', '#ffcb6b'];

  function fmt(v) {
    if (v === null || v === undefined || !isFinite(v)) return '–';
    const a = Math.abs(v);
    if (a !== 0 && (a >= 1e6 || a < 1e-3)) return v.toExponential(3);
    return Number(v.toPrecision(5)).toString();
  }

  // Fields hidden by a click on their legend entry (kept across reloads, by name).
  const hidden = new Set();
  let redraw = null;
  const MARK_COLORS = { drop: '#ffd666', box: '#ff8c5a', tank: '#d2a0ff' };

  // stats: /stats.json; frame: the current frame. opt: {hover: a frame under the mouse
  // or null, fps, marks: [{t, kind}] (drops, keyframes), spans: [[from, to]] (rain)}.
  // Draws the lines over a time axis in seconds and fills legend with each field's
  // value at the hovered frame (else the current one).
  function draw(canvas, legend, stats, frame, opt) {
    opt = opt || {};
    redraw = () => draw(canvas, legend, stats, frame, opt);
    const dpr = window.devicePixelRatio || 1;
    const w = Math.max(1, Math.round(canvas.clientWidth * dpr));
    const h = Math.max(1, Math.round(canvas.clientHeight * dpr));
    if (canvas.width !== w || canvas.height !== h) { canvas.width = w; canvas.height = h; }
    const ctx = canvas.getContext('2d');
    ctx.clearRect(0, 0, w, h);
    const frames = stats ? stats.frames : 0;
    const fps = opt.fps || (stats && stats.fps) || 30;
    const pad = 6 * dpr, axis = 14 * dpr, top = 6 * dpr;
    const ph = h - axis - top; // the lines' height
    ctx.strokeStyle = '#27313a';
    ctx.lineWidth = 1;
    for (let i = 0; i <= 4; i++) {
      const y = Math.round(top + ph * i / 4) + 0.5;
      ctx.beginPath(); ctx.moveTo(0, y); ctx.lineTo(w, y); ctx.stroke();
    }
    const xOf = (i) => (frames > 1 ? i / (frames - 1) : 0) * (w - 2 * pad) + pad;
    // the time axis: a tick and a label every 1, 2, 5, 10... seconds
    if (frames > 1) {
      const dur = (frames - 1) / fps;
      const step = [0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300].find((s) => dur / s <= (w / dpr) / 60) || 600;
      ctx.fillStyle = '#7d8b97';
      ctx.font = `${10 * dpr}px ui-monospace, "DejaVu Sans Mono", monospace`;
      ctx.textAlign = 'center';
      for (let t = 0; t <= dur + 1e-9; t += step) {
        const x = Math.round(xOf(t * fps)) + 0.5;
        ctx.fillRect(x - 0.5, top + ph, 1, 3 * dpr);
        ctx.fillText(`${+t.toFixed(2)} s`, Math.min(w - 14 * dpr, Math.max(14 * dpr, x)), h - 2 * dpr);
      }
      ctx.textAlign = 'start';
      // rain as bands, drops and keyframes as ticks along the top
      ctx.fillStyle = 'rgba(120, 200, 255, 0.08)';
      for (const [a, b] of opt.spans || []) {
        const x0 = xOf(Math.max(0, a) * fps), x1 = xOf(Math.min(dur, b) * fps);
        if (x1 > x0) ctx.fillRect(x0, top, x1 - x0, ph);
      }
      for (const m of opt.marks || []) {
        const x = Math.round(xOf(m.t * fps)) + 0.5;
        ctx.strokeStyle = MARK_COLORS[m.kind] || '#fff';
        ctx.lineWidth = 1.5 * dpr;
        ctx.beginPath(); ctx.moveTo(x, 0); ctx.lineTo(x, top + 5 * dpr); ctx.stroke();
      }
    }
    const at = opt.hover !== null && opt.hover !== undefined ? opt.hover : frame;
    const parts = [];
    if (stats && stats.fields) {
      stats.fields.forEach((name, k) => {
        const vals = stats.values[k] || [];
        let lo = Infinity, hi = -Infinity;
        for (const v of vals) if (v !== null && isFinite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
        const col = COLORS[k % COLORS.length];
        if (lo <= hi && !hidden.has(name)) {
          const span = hi > lo ? hi - lo : 1;
          ctx.strokeStyle = col;
          ctx.lineWidth = 1.5 * dpr;
          ctx.beginPath();
          let pen = false;
          vals.forEach((v, i) => {
            if (v === null || !isFinite(v)) { pen = false; return; }
            const y = top + ph - (v - lo) / span * ph * (hi > lo ? 1 : 0.5);
            if (pen) ctx.lineTo(xOf(i), y); else ctx.moveTo(xOf(i), y);
            pen = true;
          });
          ctx.stroke();
        }
        parts.push([col, name, at < vals.length ? vals[at] : null]);
      });
    }
    if (frames > 0) {
      const x = Math.round(xOf(Math.min(frame, frames - 1))) + 0.5;
      ctx.strokeStyle = '#ffffff';
      ctx.lineWidth = 1.5 * dpr;
      ctx.beginPath(); ctx.moveTo(x, top); ctx.lineTo(x, top + ph); ctx.stroke();
      if (at !== frame) {
        const xh = Math.round(xOf(Math.min(at, frames - 1))) + 0.5;
        ctx.strokeStyle = 'rgba(255, 255, 255, 0.35)';
        ctx.lineWidth = 1 * dpr;
        ctx.beginPath(); ctx.moveTo(xh, top); ctx.lineTo(xh, top + ph); ctx.stroke();
      }
    }
    legend.textContent = '';
    if (stats && frames) {
      const s = document.createElement('span');
      s.className = 'at';
      s.textContent = `${at === frame ? 'frame' : 'under the mouse:'} ${(at / fps).toFixed(3)} s`;
      legend.append(s);
    }
    for (const [col, name, v] of parts) {
      const s = document.createElement('span');
      const sw = document.createElement('i');
      sw.style.background = col;
      s.append(sw, `${name} ${fmt(v)}`);
      s.className = hidden.has(name) ? 'field off' : 'field';
      s.dataset.field = name;
      s.title = hidden.has(name) ? 'show this line' : 'hide this line';
      s.addEventListener('click', () => {
        if (hidden.has(name)) hidden.delete(name); else hidden.add(name);
        if (redraw) redraw();
      });
      legend.append(s);
    }
    if (stats && stats.done < stats.frames) {
      const s = document.createElement('span');
      s.textContent = `(simulating ${stats.done}/${stats.frames})`;
      legend.append(s);
    }
  }

  // The frame under a click at clientX on the canvas.
  function frameAt(canvas, clientX, frames) {
    const r = canvas.getBoundingClientRect();
    const pad = 6;
    const u = (clientX - r.left - pad) / Math.max(1, r.width - 2 * pad);
    return Math.max(0, Math.min(frames - 1, Math.round(u * (frames - 1))));
  }

  return { draw, frameAt };
})();
