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

  // stats: /stats.json; frame: the current frame. Returns nothing; fills legend.
  function draw(canvas, legend, stats, frame) {
    const dpr = window.devicePixelRatio || 1;
    const w = Math.max(1, Math.round(canvas.clientWidth * dpr));
    const h = Math.max(1, Math.round(canvas.clientHeight * dpr));
    if (canvas.width !== w || canvas.height !== h) { canvas.width = w; canvas.height = h; }
    const ctx = canvas.getContext('2d');
    ctx.clearRect(0, 0, w, h);
    const frames = stats ? stats.frames : 0;
    const pad = 6 * dpr;
    ctx.strokeStyle = '#27313a';
    ctx.lineWidth = 1;
    for (let i = 0; i <= 4; i++) {
      const y = Math.round(pad + (h - 2 * pad) * i / 4) + 0.5;
      ctx.beginPath(); ctx.moveTo(0, y); ctx.lineTo(w, y); ctx.stroke();
    }
    const xOf = (i) => (frames > 1 ? i / (frames - 1) : 0) * (w - 2 * pad) + pad;
    const parts = [];
    if (stats && stats.fields) {
      stats.fields.forEach((name, k) => {
        const vals = stats.values[k] || [];
        let lo = Infinity, hi = -Infinity;
        for (const v of vals) if (v !== null && isFinite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
        const col = COLORS[k % COLORS.length];
        if (lo <= hi) {
          const span = hi > lo ? hi - lo : 1;
          ctx.strokeStyle = col;
          ctx.lineWidth = 1.5 * dpr;
          ctx.beginPath();
          let pen = false;
          vals.forEach((v, i) => {
            if (v === null || !isFinite(v)) { pen = false; return; }
            const y = h - pad - (v - lo) / span * (h - 2 * pad) * (hi > lo ? 1 : 0.5);
            if (pen) ctx.lineTo(xOf(i), y); else ctx.moveTo(xOf(i), y);
            pen = true;
          });
          ctx.stroke();
        }
        parts.push([col, name, frame < vals.length ? vals[frame] : null]);
      });
    }
    if (frames > 0) {
      const x = Math.round(xOf(Math.min(frame, frames - 1))) + 0.5;
      ctx.strokeStyle = '#ffffff';
      ctx.lineWidth = 1.5 * dpr;
      ctx.beginPath(); ctx.moveTo(x, 0); ctx.lineTo(x, h); ctx.stroke();
    }
    legend.textContent = '';
    for (const [col, name, v] of parts) {
      const s = document.createElement('span');
      const sw = document.createElement('i');
      sw.style.background = col;
      s.append(sw, `${name} ${fmt(v)}`);
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
