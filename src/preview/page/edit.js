// edit.js - what can be dragged on the picture and on the timeline, as handles in scene
// units, each with the JSON Pointer of the value it changes (POST /edit, docs/preview.md
// "Editing from the page"). No requests here: app.js sends the edits.
'use strict';

const Editor = (() => {
  const num = (v, d) => (typeof v === 'number' && isFinite(v) ? v : d);
  const pair = (v) => (Array.isArray(v) && v.length === 2 && v.every((x) => typeof x === 'number') ? v : null);
  const rect4 = (v) => (Array.isArray(v) && v.length === 4 && v.every((x) => typeof x === 'number') ? v : null);
  const arr = (v) => (Array.isArray(v) ? v : []);
  // Positions are written as whole scene units, times to the millisecond, angles to the degree.
  const round = (v) => Math.round(v);
  const roundT = (t) => Math.round(t * 1000) / 1000;

  // The four corners of [x, y, w, h]; dragging one keeps the opposite one where it is.
  function rectCorners(r, path, kind, label, overlay) {
    const [x, y, w, h] = r;
    const pts = [[x, y], [x + w, y], [x, y + h], [x + w, y + h]];
    return pts.map((p, k) => {
      const o = pts[3 - k];
      return {
        kind, label: `${label} corner ${k}`, x: p[0], y: p[1], overlay,
        drag: (X, Y) => [{ path, value: [round(Math.min(X, o[0])), round(Math.min(Y, o[1])),
          round(Math.abs(X - o[0])), round(Math.abs(Y - o[1]))] }],
      };
    });
  }

  // A box's corners at its pose: dragging one sets the size (twice the corner's offset
  // from the centre, in the box's own frame), the centre stays on its path.
  function boxCorners(b, i, pose, overlay) {
    const s = pair(b.size);
    if (!s) return [];
    const a = -pose.angle * Math.PI / 180, c = Math.cos(a), sn = Math.sin(a);
    return [[-1, -1], [1, -1], [-1, 1], [1, 1]].map(([sx, sy]) => {
      const lx = sx * s[0] / 2, ly = sy * s[1] / 2;
      return {
        kind: 'box-corner', label: `box ${i} corner`, overlay,
        x: pose.x + lx * c - ly * sn, y: pose.y + lx * sn + ly * c,
        drag: (X, Y) => {
          const dx = X - pose.x, dy = Y - pose.y; // into the box's frame
          const u = dx * c + dy * sn, v = -dx * sn + dy * c;
          return [{ path: `/boxes/${i}/size`, value: [Math.max(1, round(2 * Math.abs(u))), Math.max(1, round(2 * Math.abs(v)))] }];
        },
      };
    });
  }

  // Keyframes ("path") or a single "at" of a box or the tank under base (a pointer).
  function keyframes(obj, base, kind, label, overlay, out, times) {
    const p = arr(obj.path);
    if (p.length) {
      p.forEach((k, j) => {
        const at = pair(k.at);
        if (!at) return;
        const h = {
          kind, label: `${label} keyframe ${j} (t ${num(k.t, 0)})`, x: at[0], y: at[1], overlay,
          drag: (X, Y) => [{ path: `${base}/path/${j}/at`, value: [round(X), round(Y)] }],
          del: p.length > 1 ? [{ op: 'remove', path: `${base}/path/${j}` }] : null,
        };
        out.push(h);
        if (typeof k.t === 'number') {
          const lo = j ? num(p[j - 1].t, 0) : 0, hi = j + 1 < p.length ? num(p[j + 1].t, Infinity) : Infinity;
          times.push({ kind, label: h.label, t: k.t, overlay, handle: h,
            drag: (t) => [{ path: `${base}/path/${j}/t`, value: roundT(Math.min(hi, Math.max(lo, t))) }] });
        }
      });
    } else if (pair(obj.at)) {
      const at = pair(obj.at);
      out.push({ kind, label, x: at[0], y: at[1], overlay,
        drag: (X, Y) => [{ path: `${base}/at`, value: [round(X), round(Y)] }] });
    }
  }

  // Every handle of scene sc at time t: {kind, label, x, y, overlay (the toggle it
  // belongs to), drag(x, y) -> [{path, value}], del: ops or null}, and the timeline's
  // marks {kind, label, t, overlay, drag(t) -> [{path, value}]}. px: a device pixel in
  // scene units (the direction handle's length).
  function handles(sc, t, px, poses) {
    const out = [], times = [];
    if (!sc || typeof sc !== 'object') return { out, times };
    arr(sc.drops).forEach((d, i) => {
      const at = pair(d.at);
      if (!at) return;
      const h = {
        kind: 'drop', label: `drop ${i} (t ${num(d.t, 0)})`, x: at[0], y: at[1], overlay: 'drops',
        drag: (X, Y) => [{ path: `/drops/${i}/at`, value: [round(X), round(Y)] }],
        del: [{ op: 'remove', path: `/drops/${i}` }],
      };
      out.push(h);
      if (typeof d.t === 'number') {
        times.push({ kind: 'drop', label: h.label, t: d.t, overlay: 'drops', handle: h,
          drag: (tt) => [{ path: `/drops/${i}/t`, value: roundT(Math.max(0, tt)) }] });
      }
    });
    arr(sc.boxes).forEach((b, i) => {
      keyframes(b, `/boxes/${i}`, 'box', `box ${i}`, 'boxes', out, times);
      out.push(...boxCorners(b, i, Overlays.boxPose(b, i, t, poses, [0, 0]), 'boxes'));
    });
    if (sc.tank && typeof sc.tank === 'object') keyframes(sc.tank, '/tank', 'tank', 'tank', 'tank', out, times);
    arr(sc.blocks).forEach((bl, i) => {
      const r = rect4(bl.rect);
      if (r) out.push(...rectCorners(r, `/blocks/${i}/rect`, 'block', `block ${i}`, 'tank'));
    });
    arr(sc.emitters).forEach((e, i) => {
      if (e.type === 'rain') {
        const r = rect4(e.area);
        if (r) out.push(...rectCorners(r, `/emitters/${i}/area`, 'rain', `rain ${i}`, 'rain'));
      } else if (e.type === 'stream') {
        const at = pair(e.at);
        if (!at) return;
        const dir = num(e.direction, 90) * Math.PI / 180, len = 40 * px;
        out.push({ kind: 'nozzle', label: `emitter ${i} nozzle`, x: at[0], y: at[1], overlay: 'emitters',
          drag: (X, Y) => [{ path: `/emitters/${i}/at`, value: [round(X), round(Y)] }] });
        out.push({ kind: 'direction', label: `emitter ${i} direction`, overlay: 'emitters',
          x: at[0] + Math.cos(dir) * len, y: at[1] + Math.sin(dir) * len,
          drag: (X, Y) => {
            let deg = Math.round(Math.atan2(Y - at[1], X - at[0]) * 180 / Math.PI);
            if (deg < 0 && num(e.direction, 90) >= 0) deg += 360;
            return [{ path: `/emitters/${i}/direction`, value: deg }];
          } });
      }
    });
    return { out, times };
  }

  // The value at JSON Pointer path in obj set to value (the page's copy, until the reload).
  function setLocal(obj, path, value) {
    const keys = path.split('/').slice(1).map((k) => k.replace(/~1/g, '/').replace(/~0/g, '~'));
    let o = obj;
    for (let i = 0; i + 1 < keys.length; i++) {
      if (!o || typeof o !== 'object') return;
      o = o[keys[i]];
    }
    if (o && typeof o === 'object') o[keys[keys.length - 1]] = value;
  }

  // The handle nearest (x, y) within r scene units, among those whose overlay is on.
  function hit(list, x, y, r, on) {
    let best = null, bd = r * r;
    for (const h of list) {
      if (on && !on[h.overlay]) continue;
      const d = (h.x - x) ** 2 + (h.y - y) ** 2;
      if (d < bd || (!best && d <= bd)) { best = h; bd = d; }
    }
    return best;
  }

  // Small rings at every handle; the hovered one larger, the selected one filled.
  function draw(canvas, sc, list, on, hover, selected) {
    if (!sc || !Array.isArray(sc.size)) return;
    const ctx = canvas.getContext('2d');
    const sx = canvas.width / sc.size[0], sy = canvas.height / sc.size[1];
    ctx.setTransform(sx, 0, 0, sy, 0, 0);
    const px = 1 / Math.min(sx, sy);
    for (const h of list) {
      if (!on[h.overlay]) continue;
      const big = h === hover || (selected && h.label === selected.label);
      ctx.lineWidth = 1.5 * px;
      ctx.strokeStyle = 'rgba(255, 255, 255, 0.95)';
      ctx.fillStyle = selected && h.label === selected.label ? 'rgba(79, 179, 217, 0.95)' : 'rgba(0, 0, 0, 0.35)';
      ctx.beginPath();
      ctx.arc(h.x, h.y, (big ? 6 : 4) * px, 0, 2 * Math.PI);
      ctx.fill();
      ctx.stroke();
    }
    ctx.setTransform(1, 0, 0, 1, 0, 0);
  }

  return { handles, setLocal, hit, draw, roundT };
})();
