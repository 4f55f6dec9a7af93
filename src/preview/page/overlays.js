// overlays.js - what the scene says, drawn over the picture in scene units
// (the scene's "size"), from GET /scene.json: drops and rain areas fading in over
// their time, box paths with their keyframes, stream emitters, the tank and blocks.
'use strict';

const Overlays = (() => {
  const COL = {
    drop: '255, 214, 102',   // warm yellow
    rain: '120, 200, 255',   // sky blue
    box: '255, 140, 90',     // orange
    key: '255, 255, 255',
    emit: '140, 255, 170',   // green
    tank: '210, 160, 255',   // violet
  };
  const rgba = (c, a) => `rgba(${c}, ${Math.max(0, Math.min(1, a)).toFixed(3)})`;
  const num = (v, d) => (typeof v === 'number' && isFinite(v) ? v : d);
  const pair = (v, d) => (Array.isArray(v) && v.length === 2 ? v.map(Number) : d);
  const range = (v, d) => (Array.isArray(v) ? [num(v[0], d[0]), num(v[1], d[1])]
    : typeof v === 'number' ? [v, v] : d);

  // How strongly an event at time te shows at time t: fades in over the second
  // before it, full at it, fades out over the half second after.
  function nearness(t, te) {
    if (t < te - 1) return 0;
    if (t < te) return 1 - (te - t);
    if (t < te + 0.5) return 1 - (t - te) / 0.5;
    return 0;
  }

  // A keyframed pose {x, y, angle} at time t: linear between keys, held outside.
  function poseAt(obj, t, defAt) {
    if (Array.isArray(obj.path) && obj.path.length) {
      const p = obj.path;
      const k = (i) => ({ t: num(p[i].t, 0), at: pair(p[i].at, defAt), a: num(p[i].angle, 0) });
      if (t <= k(0).t) { const a = k(0); return { x: a.at[0], y: a.at[1], angle: a.a }; }
      for (let i = 0; i + 1 < p.length; i++) {
        const a = k(i), b = k(i + 1);
        if (t <= b.t) {
          const u = b.t > a.t ? (t - a.t) / (b.t - a.t) : 1;
          return { x: a.at[0] + u * (b.at[0] - a.at[0]), y: a.at[1] + u * (b.at[1] - a.at[1]),
            angle: a.a + u * (b.a - a.a) };
        }
      }
      const z = k(p.length - 1);
      return { x: z.at[0], y: z.at[1], angle: z.a };
    }
    const at = pair(obj.at, defAt);
    return { x: at[0], y: at[1], angle: num(obj.angle, 0) };
  }

  // Box i at time t: a floating box where the simulation has it in this frame (poses:
  // /stats.json's boxes of the frame, [x, y, angle] each, once known), else from its
  // keyframes.
  function boxPose(b, i, t, poses, defAt) {
    const q = b && b.float && Array.isArray(poses) ? poses[i] : null;
    if (Array.isArray(q) && q.length === 3) return { x: q[0], y: q[1], angle: q[2] };
    return poseAt(b, t, defAt);
  }

  function rotatedRect(ctx, pose, w, h) {
    ctx.save();
    ctx.translate(pose.x, pose.y);
    ctx.rotate(-pose.angle * Math.PI / 180); // counter-clockwise on screen, y down
    ctx.beginPath();
    ctx.rect(-w / 2, -h / 2, w, h);
    ctx.restore();
  }

  // The top-left corner of a rotated rectangle's bounding box, where its label goes.
  function topLeft(pose, w, h) {
    const a = pose.angle * Math.PI / 180, c = Math.abs(Math.cos(a)), s = Math.abs(Math.sin(a));
    return [pose.x - (w * c + h * s) / 2, pose.y - (w * s + h * c) / 2];
  }

  // The labels drawn so far in this frame's overlay, [x, y, w, h] in scene units: a label
  // that would cover one moves down a line until it is clear (keyframes held at one place,
  // or close together, would otherwise print over each other).
  let placed = [];
  const overlaps = (a, b) => a[0] < b[0] + b[2] && b[0] < a[0] + a[2] &&
    a[1] < b[1] + b[3] && b[1] < a[1] + a[3];

  function label(ctx, text, x, y, c, px) {
    ctx.font = `${11 * px}px ui-monospace, "DejaVu Sans Mono", monospace`;
    const w = ctx.measureText(text).width;
    const box = [x - 2 * px, y - 10 * px, w + 4 * px, 13 * px];
    for (let tries = 0; tries < 12 && placed.some((b) => overlaps(box, b)); tries++) {
      y += 14 * px;
      box[1] += 14 * px;
    }
    placed.push(box);
    ctx.fillStyle = 'rgba(0, 0, 0, 0.55)';
    ctx.fillRect(box[0], box[1], box[2], box[3]);
    ctx.fillStyle = rgba(c, 0.95);
    ctx.fillText(text, x, y);
  }

  function drops(ctx, sc, t, px) {
    for (const d of Array.isArray(sc.drops) ? sc.drops : []) {
      const at = pair(d.at, null);
      if (!at) continue;
      const r = num(d.radius, 8), te = num(d.t, 0), k = nearness(t, te);
      ctx.lineWidth = (1 + 1.5 * k) * px;
      ctx.strokeStyle = rgba(COL.drop, 0.25 + 0.75 * k);
      ctx.beginPath();
      ctx.arc(at[0], at[1], Math.max(r, 3 * px), 0, 2 * Math.PI);
      ctx.stroke();
      if (k > 0) { // a ring closing in on the drop as its time comes
        ctx.strokeStyle = rgba(COL.drop, k * 0.8);
        ctx.beginPath();
        ctx.arc(at[0], at[1], r + (t < te ? (te - t) * 40 * px : 0), 0, 2 * Math.PI);
        ctx.stroke();
      }
      ctx.fillStyle = rgba(COL.drop, 0.35 + 0.65 * k);
      ctx.beginPath();
      ctx.arc(at[0], at[1], 2 * px, 0, 2 * Math.PI);
      ctx.fill();
      if (k > 0.05) label(ctx, `t ${te}`, at[0] + r + 4 * px, at[1] - 4 * px, COL.drop, px);
    }
  }

  function emitters(ctx, sc, t, px, end, rain, streams) {
    for (const e of Array.isArray(sc.emitters) ? sc.emitters : []) {
      const from = num(e.from, 0), to = num(e.to, end);
      const active = t >= from && t < to;
      const k = active ? 1 : Math.max(nearness(t, from), 0);
      if (e.type === 'rain' && rain) {
        const a = Array.isArray(e.area) && e.area.length === 4 ? e.area.map(Number)
          : [0, 0, sc.size[0], sc.size[1]];
        ctx.setLineDash([6 * px, 4 * px]);
        ctx.lineWidth = 1.5 * px;
        ctx.strokeStyle = rgba(COL.rain, 0.3 + 0.7 * k);
        ctx.fillStyle = rgba(COL.rain, 0.04 + 0.1 * k);
        const inset = 1 * px;
        ctx.fillRect(a[0], a[1], a[2], a[3]);
        ctx.strokeRect(a[0] + inset, a[1] + inset, a[2] - 2 * inset, a[3] - 2 * inset);
        ctx.setLineDash([]);
        const r = range(e.radius, [4, 10]);
        label(ctx, `rain ${num(e.rate, 10)}/s  r ${r[0]}-${r[1]}  ${from}-${+to.toFixed(3)} s`,
          a[0] + 6 * px, a[1] + 16 * px, COL.rain, px);
      } else if (e.type === 'stream' && streams) {
        const at = pair(e.at, null);
        if (!at) continue;
        const dir = num(e.direction, 90) * Math.PI / 180, sp = num(e.spread, 5) * Math.PI / 180;
        const len = 40 * px;
        ctx.fillStyle = rgba(COL.emit, 0.15 + 0.25 * k);
        ctx.beginPath();
        ctx.moveTo(at[0], at[1]);
        ctx.arc(at[0], at[1], len, dir - sp, dir + sp);
        ctx.closePath();
        ctx.fill();
        ctx.strokeStyle = rgba(COL.emit, 0.4 + 0.6 * k);
        ctx.lineWidth = 2 * px;
        ctx.beginPath();
        ctx.moveTo(at[0], at[1]);
        ctx.lineTo(at[0] + Math.cos(dir) * len, at[1] + Math.sin(dir) * len);
        ctx.stroke();
        ctx.beginPath();
        ctx.arc(at[0], at[1], 4 * px, 0, 2 * Math.PI);
        ctx.stroke();
        label(ctx, `stream ${num(e.rate, 100)}/s`, at[0] + 8 * px, at[1] - 8 * px, COL.emit, px);
      }
    }
  }

  function boxes(ctx, sc, t, px, poses) {
    (Array.isArray(sc.boxes) ? sc.boxes : []).forEach((b, i) => {
      const size = pair(b.size, [10, 10]);
      if (Array.isArray(b.path) && b.path.length > 1) {
        ctx.strokeStyle = rgba(COL.box, 0.7);
        ctx.lineWidth = 1.5 * px;
        ctx.setLineDash([4 * px, 3 * px]);
        ctx.beginPath();
        b.path.forEach((k, j) => {
          const at = pair(k.at, [0, 0]);
          if (j) ctx.lineTo(at[0], at[1]); else ctx.moveTo(at[0], at[1]);
        });
        ctx.stroke();
        ctx.setLineDash([]);
        for (const k of b.path) {
          const at = pair(k.at, [0, 0]);
          ctx.fillStyle = rgba(COL.key, 0.9);
          ctx.strokeStyle = rgba(COL.box, 1);
          ctx.beginPath();
          ctx.rect(at[0] - 3 * px, at[1] - 3 * px, 6 * px, 6 * px);
          ctx.fill();
          ctx.stroke();
          label(ctx, `t ${num(k.t, 0)}`, at[0] + 6 * px, at[1] + 14 * px, COL.box, px);
        }
      }
      const pose = boxPose(b, i, t, poses, [sc.size[0] / 2, sc.size[1] / 2]);
      rotatedRect(ctx, pose, size[0], size[1]);
      ctx.lineWidth = 2 * px;
      ctx.strokeStyle = rgba(COL.box, b.float ? 0.55 : 0.95);
      if (b.float) ctx.setLineDash([3 * px, 3 * px]);
      ctx.stroke();
      ctx.setLineDash([]);
      const tl = topLeft(pose, size[0], size[1]);
      label(ctx, `box ${i}${b.float ? ' (floats)' : ''}`, tl[0], tl[1] - 5 * px, COL.box, px);
    });
  }

  function tank(ctx, sc, t, px) {
    if (sc.tank && typeof sc.tank === 'object') {
      const size = pair(sc.tank.size, [sc.size[0], sc.size[1]]);
      const pose = poseAt(sc.tank, t, [sc.size[0] / 2, sc.size[1] / 2]);
      rotatedRect(ctx, pose, size[0], size[1]);
      ctx.lineWidth = 2.5 * px;
      ctx.strokeStyle = rgba(COL.tank, 0.9);
      ctx.stroke();
      const tl = topLeft(pose, size[0], size[1]);
      label(ctx, 'tank', tl[0] + 6 * px, tl[1] + 16 * px, COL.tank, px);
    }
    for (const bl of Array.isArray(sc.blocks) ? sc.blocks : []) {
      const r = Array.isArray(bl.rect) && bl.rect.length === 4 ? bl.rect.map(Number) : null;
      if (!r) continue;
      ctx.fillStyle = rgba(COL.tank, t < 0.5 ? 0.18 : 0.06);
      ctx.fillRect(r[0], r[1], r[2], r[3]);
      ctx.setLineDash([5 * px, 4 * px]);
      ctx.lineWidth = 1.5 * px;
      ctx.strokeStyle = rgba(COL.tank, 0.7);
      ctx.strokeRect(r[0], r[1], r[2], r[3]);
      ctx.setLineDash([]);
      label(ctx, 'block', r[0] + 4 * px, r[1] + 14 * px, COL.tank, px);
    }
  }

  // Draws every overlay that `on` enables onto canvas (sized in device pixels) for
  // scene sc at time t (seconds); end is the scene's duration; poses: the boxes' poses in
  // this frame ([x, y, angle] each, from /stats.json) or null.
  function draw(canvas, sc, t, end, on, poses) {
    const ctx = canvas.getContext('2d');
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    placed = [];
    if (!sc || !Array.isArray(sc.size)) return;
    const sx = canvas.width / sc.size[0], sy = canvas.height / sc.size[1];
    ctx.setTransform(sx, 0, 0, sy, 0, 0);
    const px = 1 / Math.min(sx, sy); // one device pixel in scene units
    if (on.tank) tank(ctx, sc, t, px);
    if (on.rain || on.emitters) emitters(ctx, sc, t, px, end, on.rain, on.emitters);
    if (on.boxes) boxes(ctx, sc, t, px, poses);
    if (on.drops) drops(ctx, sc, t, px);
  }

  // The labels of the last draw, [x, y, w, h] in scene units (for the tests).
  const labels = () => placed.map((b) => b.slice());

  return { draw, poseAt, boxPose, nearness, labels };
})();
