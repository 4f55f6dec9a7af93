// tidepool compare report: draws the page from the two JSON blocks written into it
// (#tp-report: the JSON report itself; #tp-pictures: pictures of the worst failing frames).
// Plain JavaScript, no libraries, no requests.
"use strict";
(async () => {
  const R = JSON.parse(document.getElementById("tp-report").textContent);
  const P = JSON.parse(document.getElementById("tp-pictures").textContent);
  const $ = (id) => document.getElementById(id);
  const el = (tag, attrs, ...kids) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v;
      else if (k === "text") e.textContent = v;
      else e.setAttribute(k, v);
    }
    for (const k of kids) e.append(k);
    return e;
  };
  const SVG = "http://www.w3.org/2000/svg";
  const sv = (tag, attrs) => {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    return e;
  };

  // Numbers as the JSON has them, rounded to 6 significant digits for the eye; the exact
  // value stays in data-value.
  const fmt = (v) => {
    if (v === null || v === undefined) return "";
    if (Number.isInteger(v)) return String(v);
    return String(Number(v.toPrecision(6)));
  };

  // The metrics: JSON key, heading, tolerance key, whether larger is worse, unit.
  const METRICS = [
    { key: "max_diff", name: "max-diff", tol: "max_diff", worse: "high", unit: "0..255" },
    { key: "pixels", name: "pixels", tol: "max_pixels", worse: "high", unit: "count" },
    { key: "ratio", name: "ratio", tol: "max_ratio", worse: "high", unit: "0..1" },
    { key: "psnr", name: "PSNR", tol: "min_psnr", worse: "low", unit: "dB" },
    { key: "ssim", name: "SSIM", tol: "min_ssim", worse: "low", unit: "-1..1" },
    { key: "flip", name: "FLIP", tol: "max_flip", worse: "high", unit: "0..1" },
  ].filter((m) => m.key !== "flip" || R.flip_ppd !== null);

  const frames = R.frames || [];
  const pics = new Map((P.frames || []).map((p) => [p.index, p]));
  const failing = (f) => f.status !== "identical" && f.status !== "within";
  const byIndex = new Map(frames.map((f) => [f.index, f]));

  // ---- the pictures as shown ----
  // The report carries each picture once, losslessly (report_html.c), as WebP bytes in
  // one blob (#tp-blob, text7: 7 bits an ASCII character, 14 a two-byte one) that the pictures point into as
  // [offset, length]. For a frame: pic, one side (pic_side "a" or "b"), whole or its
  // difference from that side of frame pic_from, mod 256; delta = B - A mod 256; the FLIP
  // map as indices into the magma table P.magma (the map in colour is their colours). The
  // page rebuilds the other side (pic + delta or pic - delta) and the difference map: the
  // heat of max over R, G, B of |delta|, black (none) through violet, red and orange to
  // white at the frame's max-diff; any difference at least a little above black; none in
  // the ignored rectangles.
  const TEXT7_ESC = [0, 13, 60];
  const text7 = (s, n) => {
    const out = new Uint8Array(n);
    let acc = 0, bits = 0, o = 0;
    const put = (v) => {
      acc = ((acc << 7) | v) & 0x7fff;
      bits += 7;
      if (bits >= 8 && o < n) {
        bits -= 8;
        out[o++] = (acc >> bits) & 255;
      }
    };
    for (let i = 0; i < s.length && o < n; i++) {
      const c = s.charCodeAt(i);
      if (c < 128) put(c);
      else if (c >= 0x100 && c < 0x280) {
        put(TEXT7_ESC[(c - 0x100) >> 7]);
        put(c & 127);
      } else throw new Error(`character ${c} in the pictures' blob`);
    }
    if (o !== n) throw new Error(`the pictures' blob holds ${o} of ${n} bytes`);
    return out;
  };
  const blob = text7(($("tp-blob") || {}).textContent || "", P.blob_bytes || 0);
  const webp = ([o, n]) => {
    let s = "";
    for (let i = o; i < o + n; i += 0x8000) s += String.fromCharCode.apply(null, blob.subarray(i, Math.min(o + n, i + 0x8000)));
    return "data:image/webp;base64," + btoa(s);
  };
  const HEAT = [[0, 0, 0], [90, 0, 130], [210, 30, 30], [255, 165, 0], [255, 255, 255]];
  const heatLut = (maxDiff) => {
    const lut = new Uint8Array(768);
    for (let d = 0; d < 256; d++) {
      let t = maxDiff > 0 ? d / maxDiff : 0;
      t = d > 0 && t < 0.08 ? 0.08 : t > 1 ? 1 : t;
      const q = 4 * t, k = q >= 4 ? 3 : Math.floor(q), fr = q - k;
      for (let c = 0; c < 3; c++) lut[3 * d + c] = Math.round(HEAT[k][c] * (1 - fr) + HEAT[k + 1][c] * fr);
    }
    return lut;
  };
  const canvas = document.createElement("canvas");
  const ctx = canvas.getContext("2d", { willReadFrequently: true });
  const decode = async (uri, w, h) => {
    const img = new Image();
    img.src = uri;
    await img.decode();
    canvas.width = w;
    canvas.height = h;
    ctx.drawImage(img, 0, 0);
    return ctx.getImageData(0, 0, w, h);
  };
  const encode = (data) => {
    canvas.width = data.width;
    canvas.height = data.height;
    ctx.putImageData(data, 0, 0);
    return canvas.toDataURL("image/png");
  };
  let rebuildError = null;
  try {
    const sides = new Map(); // the previous pictured frame's index -> [A, B] as ImageData
    for (const p of [...pics.values()].sort((a, b) => a.index - b.index)) {
      if (p.mismatch) { // both sides are whole pictures
        p.ref = webp(p.ref);
        p.test = webp(p.test);
        continue;
      }
      const [cx, cy, w, h] = p.crop;
      const k = p.pic_side === "b" ? 1 : 0;
      const pic = await decode(webp(p.pic), w, h), s = pic.data;
      if (p.pic_from !== undefined) {
        const base = sides.get(p.pic_from)[k].data;
        for (let i = 0; i < s.length; i++) if ((i & 3) !== 3) s[i] = (s[i] + base[i]) & 255;
      }
      const dl = (await decode(webp(p.delta), w, h)).data;
      const other = new ImageData(w, h), diff = new ImageData(w, h), t = other.data, o = diff.data;
      const sign = k ? -1 : 1; // the other side: A + delta, or B - delta
      const lut = heatLut((byIndex.get(p.index) || {}).max_diff || 0);
      const ign = (R.ignore || []).map(([x, y, iw, ih]) => [x - cx, y - cy, x - cx + iw, y - cy + ih]);
      for (let y = 0, j = 0; y < h; y++) {
        for (let x = 0; x < w; x++, j += 4) {
          let d = 0;
          for (let c = 0; c < 3; c++) {
            t[j + c] = (s[j + c] + sign * dl[j + c]) & 255;
            const v = dl[j + c] > 127 ? 256 - dl[j + c] : dl[j + c];
            if (v > d) d = v;
          }
          if (d && ign.some(([x0, y0, x1, y1]) => x >= x0 && x < x1 && y >= y0 && y < y1)) d = 0;
          t[j + 3] = o[j + 3] = 255;
          o[j] = lut[3 * d];
          o[j + 1] = lut[3 * d + 1];
          o[j + 2] = lut[3 * d + 2];
        }
      }
      const ab = k ? [other, pic] : [pic, other];
      sides.clear(); // pic_from is always the previous pictured frame
      sides.set(p.index, ab);
      p.ref = encode(ab[0]);
      p.test = encode(ab[1]);
      p.diff = encode(diff);
      if (p.flip) {
        // The FLIP map comes as magma indices (grey): each becomes its colour.
        const fm = await decode(webp(p.flip), w, h), m = fm.data;
        for (let j = 0; j < m.length; j += 4) {
          const k = 3 * m[j];
          m[j] = P.magma[k];
          m[j + 1] = P.magma[k + 1];
          m[j + 2] = P.magma[k + 2];
        }
        p.flip = encode(fm);
      }
    }
  } catch (e) {
    rebuildError = String(e && e.message || e);
    pics.clear();
  }

  // ---- header and summary ----
  const verdict = $("verdict");
  verdict.textContent = R.error ? "ERROR" : R.passed ? "PASS" : "FAIL";
  verdict.className = "verdict " + (R.error ? "error" : R.passed ? "pass" : "fail");
  document.title = `${verdict.textContent} · tidepool compare`;
  const side = (label, s) => el("span", {}, `${label} `, el("code", { text: s.path }),
    s.kind ? ` (${s.kind}, ${s.frames} frame${s.frames === 1 ? "" : "s"})` : "");
  $("sides").append(side("A reference", R.a), " · ", side("B test", R.b));
  // Where the report came from: the command, when, which tidepool, and the inputs' SHA-256
  // (a report downloaded from CI later can be matched to its frames).
  const made = R.made || {};
  const prov = el("div", { class: "made", id: "made" },
    el("span", { text: `${made.by || "tidepool compare"} ${made.version || ""}` }),
    made.date ? el("span", { text: ` · ${made.date}` }) : "");
  if (made.command) prov.append(el("div", {}, "Command: ", el("code", { id: "made-command", text: made.command })));
  for (const [label, s] of [["A", R.a], ["B", R.b]]) {
    if (s && s.sha256) prov.append(el("div", { class: "sha" }, `${label} SHA-256 `,
      el("code", { class: "sha-" + label.toLowerCase(), text: s.sha256 })));
  }

  const summary = $("summary");
  if (R.error) summary.append(el("p", { class: "banner error", id: "error-banner" },
    el("b", { text: "The comparison could not run: " }), R.error));
  if (R.note) summary.append(el("p", { class: "banner warn", id: "note-banner" },
    el("b", { text: "Inputs differ: " }), R.note));
  const card = (n, label, bad, id) => el("div", { class: "card" + (bad ? " bad" : ""), id },
    el("b", { text: String(n) }), el("span", { text: label }));
  summary.append(el("div", { class: "cards" },
    card(R.frames_compared, "frames compared", false, "n-compared"),
    card(R.identical, "identical", false, "n-identical"),
    card(R.within, "within tolerance", false, "n-within"),
    card(R.failed, "failing", R.failed > 0, "n-failed"),
    card(R.worst === null ? "–" : R.worst, "worst frame", false, "n-worst")));
  const chips = el("div", { class: "chips", id: "tolerances" }, el("span", { text: "Tolerances:" }));
  const tol = R.tolerance || {};
  const anyTol = METRICS.some((m) => tol[m.tol] !== null && tol[m.tol] !== undefined);
  for (const m of METRICS) {
    const v = tol[m.tol];
    if (v === null || v === undefined) continue;
    chips.append(el("span", { class: "chip", "data-tol": m.tol },
      `${m.name} ${m.worse === "high" ? "≤" : "≥"} ${fmt(v)}`));
  }
  if (!anyTol) chips.append(el("span", { class: "chip" }, "exact equality"));
  chips.append(el("span", { class: "chip" + (tol.fuzz ? "" : " off") }, `fuzz ${tol.fuzz}`));
  if (R.flip_ppd !== null) chips.append(el("span", { class: "chip" }, `FLIP at ${fmt(R.flip_ppd)} px/°`));
  for (const r of R.ignore || []) chips.append(el("span", { class: "chip" }, `ignore ${r.join(",")}`));
  summary.append(chips);
  summary.append(prov);
  if (R.accept) {
    summary.append(el("div", { class: "banner accept", id: "accept" },
      el("b", { text: "To accept B as the new reference" }), " (rewrites the frames of A that fail):",
      el("pre", {}, el("code", { text: R.accept }))));
  } else if (R.accept_note) {
    summary.append(el("p", { class: "banner warn", id: "accept" }, R.accept_note));
  }
  $("footer").textContent = `${R.format} · written by tidepool compare --html`;

  // ---- viewer ----
  const state = { mode: "side", frame: null, scale: 1, tx: 0, ty: 0, showB: false, wipe: 50, timer: 0 };
  const viewer = $("viewer"), panes = $("panes"), pick = $("pick");
  const shown = [...pics.keys()].sort((a, b) => a - b);
  const note = $("pictures-note");
  {
    const parts = [];
    if (P.error) parts.push(`Pictures could not be made: ${P.error}.`);
    if (rebuildError) parts.push(`Pictures could not be shown: ${rebuildError}.`);
    if (P.no_pixels) parts.push(`No pictures: ${P.no_pixels}.`);
    else if (!R.error) {
      const withPixels = P.measured + (P.mismatched || 0);
      if (withPixels === 0) parts.push(R.failed ? "No failing frame has pixels to show (see the table)." :
        "No failing frames.");
      else parts.push(`Pictures of ${shown.length} of ${withPixels} failing frame${withPixels === 1 ? "" : "s"} ` +
        `with pixels (the worst first by ${R.flip_ppd !== null ? "FLIP, then " : ""}MSE; at most ` +
        `${P.max_frames}, --html-frames). Frames over ${P.max_size[0]}×${P.max_size[1]} are cropped ` +
        `around the changed rectangle.`);
      if (P.mismatched) parts.push(`Frames whose sizes differ show each side whole.`);
    }
    note.textContent = parts.join(" ");
    // Failing frames the report has no picture of, and how to get them.
    const missed = frames.filter((f) => (f.status === "fail" || f.status === "size-differs") && !pics.has(f.index))
      .map((f) => f.index);
    if (missed.length && !P.no_pixels && !R.error) {
      const list = missed.length > 20 ? `${missed.slice(0, 20).join(", ")} and ${missed.length - 20} more` : missed.join(", ");
      note.after(el("p", { class: "note unpictured", id: "unpictured" },
        `Failing frame${missed.length === 1 ? "" : "s"} without pictures: ${list}. To picture ` +
        `${missed.length === 1 ? "it" : "them"}, run the comparison again with --html-frames ` +
        `${shown.length + missed.length} (the picker lists ${missed.length === 1 ? "it" : "them"}, greyed).`));
    }
  }

  const ports = [];
  const stages = [];
  const overlays = [];
  function applyTransform() {
    for (const s of stages) {
      s.style.transform = `translate(${state.tx}px, ${state.ty}px) scale(${state.scale})`;
    }
    for (const o of overlays) {
      Object.assign(o.m.style, { left: `${state.tx + o.x * state.scale}px`, top: `${state.ty + o.y * state.scale}px`,
        width: `${o.w * state.scale}px`, height: `${o.h * state.scale}px` });
    }
    $("zoom-level").value = `${Math.round(state.scale * 100)}%`;
    $("zoom-level").textContent = `${Math.round(state.scale * 100)}%`;
    viewer.dataset.scale = String(state.scale);
  }
  function zoomAt(factor, cx, cy) {
    const s = Math.min(64, Math.max(0.05, state.scale * factor));
    // Keep the picture point under (cx, cy) in place.
    state.tx = cx - (cx - state.tx) * (s / state.scale);
    state.ty = cy - (cy - state.ty) * (s / state.scale);
    state.scale = s;
    applyTransform();
  }
  function portSize() {
    const p = ports[0];
    return p ? [p.clientWidth, p.clientHeight] : [1, 1];
  }
  function fit() {
    const p = pics.get(state.frame);
    if (!p) return;
    const [w, h] = portSize();
    state.scale = Math.min(w / p.crop[2], h / p.crop[3]);
    state.tx = (w - p.crop[2] * state.scale) / 2;
    state.ty = (h - p.crop[3] * state.scale) / 2;
    applyTransform();
  }
  function actual() {
    const [w, h] = portSize();
    zoomAt(1 / state.scale, w / 2, h / 2);
  }

  // One picture pane: caption, viewport, stage with the picture(s) and the overlays.
  function pane(cls, title, extra, imgs, crop) {
    const p = pics.get(state.frame);
    crop = crop || p.crop;
    const stage = el("div", { class: "stage" });
    imgs.forEach((src, i) => {
      const img = el("img", { src, alt: title, width: crop[2], height: crop[3], draggable: "false" });
      if (i) img.classList.add("over");
      stage.append(img);
    });
    // Outlines live outside the scaled stage, placed in screen pixels by applyTransform,
    // so they stay thin at any zoom.
    const marks = [];
    const f = frames.find((x) => x.index === state.frame);
    if (f && f.bbox) marks.push(["rect", ...f.bbox]);
    if (!p.mismatch) for (const r of R.ignore || []) marks.push(["ignore", ...r]);
    // The viewport takes the picture's shape (up to a height limit in the CSS).
    const port = el("div", { class: "port", style: `aspect-ratio: ${crop[2]} / ${crop[3]}` }, stage);
    for (const [cls, x, y, w, h] of marks) {
      const m = el("div", { class: cls });
      port.append(m);
      overlays.push({ m, x: x - crop[0], y: y - crop[1], w, h });
    }
    ports.push(port);
    stages.push(stage);
    return el("figure", { class: "pane " + cls }, el("figcaption", {}, el("b", { text: title }),
      el("span", { text: extra || "" })), port);
  }

  function render() {
    const p = pics.get(state.frame);
    ports.length = 0;
    stages.length = 0;
    overlays.length = 0;
    panes.replaceChildren();
    clearInterval(state.timer);
    state.timer = 0;
    $("blink-auto").checked = false;
    if (!p) return;
    const f = frames.find((x) => x.index === state.frame);
    // Frames of different sizes: each side whole, at the same zoom; no overlay view.
    const mode = p.mismatch ? "side" : state.mode;
    for (const b of document.querySelectorAll("[data-mode]")) b.disabled = !!p.mismatch && b.dataset.mode !== "side";
    panes.className = "panes" + (mode === "side" ? "" : " single") +
      ($("show-rect").checked ? "" : " hide-rect") + ($("show-ignore").checked ? "" : " hide-ignore");
    if (p.mismatch) {
      panes.append(pane("ref", "A reference", `${p.size[0]}×${p.size[1]}`, [p.ref]),
        pane("test", "B test", `${p.test_size[0]}×${p.test_size[1]}`, [p.test], p.test_crop));
    } else if (mode === "side") {
      panes.append(pane("ref", "A reference", "", [p.ref]), pane("test", "B test", "", [p.test]),
        pane("diff", "Difference", `max-diff ${f.max_diff}: white`, [p.diff]));
      if (p.flip) panes.append(pane("flip", "FLIP error", `mean ${fmt(f.flip)}; magma 0..1`, [p.flip]));
    } else if (mode === "slider") {
      const fig = pane("wipe", "Slider: A reference | B test", "drag the bar below or press ← →  with the slider focused", [p.ref, p.test]);
      panes.append(fig);
      const port = fig.querySelector(".port");
      port.append(el("div", { class: "wipe-line", id: "wipe-line" }));
      updateWipe();
    } else {
      const fig = pane("blink", "Blink: A reference / B test", "B or space switches", [p.ref, p.test]);
      fig.querySelector(".port").append(el("div", { class: "blink-label", id: "blink-label" }));
      panes.append(fig);
      updateBlink();
    }
    $("wipe-bar").hidden = mode !== "slider";
    $("blink-toggle").hidden = mode !== "blink";
    $("blink-auto").parentElement.hidden = mode !== "blink";
    for (const b of document.querySelectorAll("[data-mode]")) b.setAttribute("aria-pressed", String(b.dataset.mode === mode));
    viewer.dataset.mode = mode;
    for (const port of ports) attachPanZoom(port);
    applyTransform();
  }

  // Slider wipe: the test picture is clipped to the right of the bar.
  function updateWipe() {
    const top = panes.querySelector(".pane.wipe img.over");
    if (!top) return;
    const p = pics.get(state.frame);
    const x = (state.wipe / 100) * p.crop[2];
    top.style.clipPath = `inset(0 0 0 ${x}px)`;
    const line = $("wipe-line");
    if (line) line.style.left = `${state.tx + x * state.scale}px`;
    viewer.dataset.wipe = String(state.wipe);
  }
  function updateBlink() {
    const top = panes.querySelector(".pane.blink img.over");
    if (!top) return;
    top.style.visibility = state.showB ? "visible" : "hidden";
    $("blink-label").textContent = state.showB ? "B test" : "A reference";
    $("blink-toggle").textContent = state.showB ? "Show reference" : "Show test";
    viewer.dataset.showing = state.showB ? "b" : "a";
  }
  function toggleBlink() {
    if (state.mode !== "blink") {
      state.mode = "blink";
      render();
    }
    state.showB = !state.showB;
    updateBlink();
  }

  function attachPanZoom(port) {
    let drag = null;
    port.addEventListener("pointerdown", (e) => {
      drag = { x: e.clientX, y: e.clientY, tx: state.tx, ty: state.ty };
      port.setPointerCapture(e.pointerId);
      port.classList.add("dragging");
    });
    port.addEventListener("pointermove", (e) => {
      if (!drag) return;
      state.tx = drag.tx + e.clientX - drag.x;
      state.ty = drag.ty + e.clientY - drag.y;
      applyTransform();
      updateWipe();
    });
    const end = () => { drag = null; port.classList.remove("dragging"); };
    port.addEventListener("pointerup", end);
    port.addEventListener("pointercancel", end);
    port.addEventListener("wheel", (e) => {
      e.preventDefault();
      const r = port.getBoundingClientRect();
      zoomAt(e.deltaY < 0 ? 1.25 : 0.8, e.clientX - r.left, e.clientY - r.top);
      updateWipe();
    }, { passive: false });
  }

  function describe(f, p) {
    const info = $("frame-info");
    info.replaceChildren();
    info.append(el("b", { text: `Frame ${f.index}` }), " — ",
      el("span", { class: "fail", text: f.status.toUpperCase() }));
    if (p.mismatch) {
      info.append(`: A is ${p.size[0]}×${p.size[1]}, B is ${p.test_size[0]}×${p.test_size[1]}; frames of ` +
        "different sizes are not compared pixel by pixel.");
      return;
    }
    if (f.failed && f.failed.length) info.append(`: ${f.failed.map((k) => k.replace("_", "-")).join(", ")} beyond tolerance`);
    info.append(`. Changed rectangle ${f.bbox[2]}×${f.bbox[3]} at (${f.bbox[0]}, ${f.bbox[1]}); `);
    const [x, y, w, h] = p.crop;
    if (w === p.size[0] && h === p.size[1]) info.append(`whole frame ${w}×${h}.`);
    else info.append(`showing ${w}×${h} at (${x}, ${y}) of the ${p.size[0]}×${p.size[1]} frame.`);
  }

  function select(index, scroll) {
    if (!pics.has(index)) return;
    state.frame = index;
    pick.value = String(index);
    describe(frames.find((x) => x.index === index), pics.get(index));
    render();
    fit();
    updateWipe();
    for (const tr of document.querySelectorAll("#frames tbody tr")) tr.classList.toggle("sel", Number(tr.dataset.index) === index);
    for (const c of document.querySelectorAll(".chart .pt")) c.classList.toggle("sel", Number(c.dataset.index) === index);
    if (scroll) $("viewer-section").scrollIntoView({ behavior: "smooth", block: "start" });
  }

  if (shown.length) {
    viewer.hidden = false;
    // Every failing frame, in order; those without pictures greyed, saying so.
    for (const f of frames.filter((x) => x.status === "fail" || x.status === "size-differs")) {
      const i = f.index;
      if (!pics.has(i)) {
        pick.append(el("option", { value: String(i), disabled: "", class: "unpictured",
          text: `${i} (no picture: --html-frames)` }));
        continue;
      }
      const m = f.status === "size-differs" ? "sizes differ" :
        R.flip_ppd !== null ? `FLIP ${fmt(f.flip)}` : `PSNR ${fmt(f.psnr)} dB`;
      pick.append(el("option", { value: String(i), text: `${i} (${m})` }));
    }
    pick.addEventListener("change", () => select(Number(pick.value)));
    for (const b of document.querySelectorAll("[data-mode]")) {
      b.addEventListener("click", () => { state.mode = b.dataset.mode; render(); fit(); updateWipe(); });
    }
    $("blink-toggle").addEventListener("click", toggleBlink);
    $("blink-auto").addEventListener("change", (e) => {
      clearInterval(state.timer);
      state.timer = e.target.checked ? setInterval(() => { state.showB = !state.showB; updateBlink(); }, 600) : 0;
    });
    $("wipe").addEventListener("input", (e) => { state.wipe = Number(e.target.value); updateWipe(); });
    const centre = () => { const [w, h] = portSize(); return [w / 2, h / 2]; };
    $("zoom-in").addEventListener("click", () => { zoomAt(2, ...centre()); updateWipe(); });
    $("zoom-out").addEventListener("click", () => { zoomAt(0.5, ...centre()); updateWipe(); });
    $("zoom-1").addEventListener("click", () => { actual(); updateWipe(); });
    $("zoom-fit").addEventListener("click", () => { fit(); updateWipe(); });
    $("show-rect").addEventListener("change", (e) => panes.classList.toggle("hide-rect", !e.target.checked));
    $("show-ignore").addEventListener("change", (e) => panes.classList.toggle("hide-ignore", !e.target.checked));
    document.addEventListener("keydown", (e) => {
      const t = e.target;
      if (e.ctrlKey || e.metaKey || e.altKey) return;
      if (t && (t.tagName === "SELECT" || (t.tagName === "INPUT" && t.type !== "checkbox"))) return;
      const k = e.key;
      const at = shown.indexOf(state.frame);
      if (k === "b" || k === "B" || k === " ") toggleBlink();
      else if (k === "1" || k === "2" || k === "3") { state.mode = ["side", "slider", "blink"][Number(k) - 1]; render(); fit(); updateWipe(); }
      else if (k === "+" || k === "=") zoomAt(2, ...centre());
      else if (k === "-" || k === "_") zoomAt(0.5, ...centre());
      else if (k === "0") actual();
      else if (k === "f" || k === "F") fit();
      else if (k === "ArrowRight" || k === "j") select(shown[Math.min(shown.length - 1, at + 1)]);
      else if (k === "ArrowLeft" || k === "k") select(shown[Math.max(0, at - 1)]);
      else return;
      updateWipe();
      e.preventDefault();
    });
    window.addEventListener("resize", () => { fit(); updateWipe(); });
  }

  // ---- charts ----
  const charts = $("charts");
  const W = 600, H = 150, L = 52, RM = 10, T = 10, B = 22;
  for (const m of METRICS) {
    const pts = frames.filter((f) => typeof f[m.key] === "number");
    if (!pts.length) continue;
    const t = tol[m.tol];
    const vals = pts.map((f) => f[m.key]);
    if (typeof t === "number") vals.push(t);
    let lo = Math.min(...vals), hi = Math.max(...vals);
    if (m.key === "ssim") hi = Math.max(hi, 1);
    if (lo === hi) { lo -= lo === 0 ? 0 : Math.abs(lo) * 0.1; hi += hi === 0 ? 1 : Math.abs(hi) * 0.1; }
    if (lo > 0 && m.key !== "psnr" && m.key !== "ssim") lo = 0;
    const pad = (hi - lo) * 0.06;
    lo -= m.key === "psnr" || m.key === "ssim" ? pad : 0;
    hi += pad;
    if (m.key === "ssim") hi = Math.min(hi, 1);
    const n = Math.max(1, R.frames.length - 1);
    const fx = (i) => L + ((W - L - RM) * (frames.length > 1 ? i / n : 0.5));
    const fy = (v) => T + (H - T - B) * (1 - (v - lo) / (hi - lo));
    const svg = sv("svg", { viewBox: `0 0 ${W} ${H}`, role: "img",
      "aria-label": `${m.name} over the frames` });
    svg.append(sv("line", { class: "axis", x1: L, y1: H - B, x2: W - RM, y2: H - B }),
      sv("line", { class: "axis", x1: L, y1: T, x2: L, y2: H - B }));
    // Tick labels with enough digits to tell them apart (SSIM lives near 1).
    const digits = Math.max(0, Math.min(8, 2 - Math.floor(Math.log10(hi - lo))));
    for (const v of [lo, (lo + hi) / 2, hi]) {
      const txt = sv("text", { class: "lab", x: L - 4, y: fy(v) + 3, "text-anchor": "end" });
      txt.textContent = String(Number(v.toFixed(digits)));
      svg.append(txt);
    }
    const last = frames.length ? frames[frames.length - 1].index : 0;
    for (const i of [0, last]) {
      const txt = sv("text", { class: "lab", x: fx(i), y: H - 6, "text-anchor": i ? "end" : "start" });
      txt.textContent = `frame ${i}`;
      svg.append(txt);
    }
    // Identical frames have no PSNR (infinite): the line breaks there.
    let d = "", pen = false;
    for (const f of frames) {
      const v = f[m.key];
      if (typeof v !== "number") { pen = false; continue; }
      d += `${pen ? "L" : "M"}${fx(f.index).toFixed(1)},${fy(v).toFixed(1)}`;
      pen = true;
    }
    svg.append(sv("path", { class: "series", d, "vector-effect": "non-scaling-stroke" }));
    if (typeof t === "number") {
      svg.append(sv("line", { class: "tol", x1: L, x2: W - RM, y1: fy(t), y2: fy(t), "data-tol": String(t) }));
      const tl = sv("text", { class: "tollab", x: W - RM - 2, y: fy(t) - 3, "text-anchor": "end" });
      tl.textContent = `tolerance ${fmt(t)}`;
      svg.append(tl);
    }
    for (const f of pts) {
      const c = sv("circle", { class: "pt" + (f.status === "fail" ? " fail" : ""), cx: fx(f.index), cy: fy(f[m.key]),
        r: frames.length > 200 ? 1.6 : 3, "data-index": String(f.index) });
      const title = sv("title", {});
      title.textContent = `frame ${f.index}: ${m.name} ${fmt(f[m.key])} (${f.status})`;
      c.append(title);
      if (pics.has(f.index)) { c.style.cursor = "pointer"; c.addEventListener("click", () => select(f.index, true)); }
      svg.append(c);
    }
    const unmeasured = frames.length - pts.length;
    charts.append(el("div", { class: "chart", "data-metric": m.key },
      el("h3", {}, `${m.name}`, el("span", { text: `${m.unit}${unmeasured ? `; ${unmeasured} frame${unmeasured === 1 ? "" : "s"} without a value` : ""}` })),
      svg));
  }
  if (!charts.children.length) {
    charts.append(el("p", { class: "note", text: R.error ? "Nothing was compared." :
      "No frame has metrics to chart (frames compared by hash, or of different sizes)." }));
  }

  // ---- table ----
  const table = $("frames");
  const cols = [
    { key: "index", name: "frame", num: true },
    { key: "status", name: "status", txt: true },
    ...METRICS.map((m) => ({ key: m.key, name: m.name, num: true, metric: m })),
    { key: "mse", name: "MSE", num: true },
    { key: "bbox", name: "changed", txt: true },
    { key: "detail", name: "detail", txt: true },
  ];
  const head = el("tr", {});
  for (const c of cols) head.append(el("th", { class: c.txt ? "txt" : "", "data-key": c.key, scope: "col", text: c.name }));
  const tbody = el("tbody", {});
  table.append(el("thead", {}, head), tbody);
  const cell = (f, c) => {
    const v = f[c.key];
    if (c.key === "bbox") return el("td", { class: "txt" }, v ? `${v[2]}×${v[3]} at ${v[0]},${v[1]}` : "");
    if (c.key === "detail") {
      let t = f.detail || "";
      if (f.status === "hash-differs") t = `${t}${t ? "; " : ""}no pixels: a manifest frame has only a hash`;
      if (f.updated) t += " [updated]";
      return el("td", { class: "txt detail" }, t);
    }
    if (c.txt) return el("td", { class: "txt" + (c.key === "status" ? " st" : "") }, String(v ?? ""));
    const td = el("td", {}, fmt(v));
    if (typeof v === "number") td.dataset.value = String(v);
    if (c.metric && f.failed && f.failed.includes(c.metric.tol)) td.classList.add("bad");
    if (c.key === "psnr" && v === null && f.status === "identical") td.textContent = "∞";
    return td;
  };
  const rows = frames.map((f) => {
    const tr = el("tr", { class: f.status + (pics.has(f.index) ? " pictured" : ""), "data-index": String(f.index) });
    for (const c of cols) tr.append(cell(f, c));
    if (pics.has(f.index)) tr.addEventListener("click", () => select(f.index, true));
    return { f, tr };
  });
  const sortBy = (key, dir) => {
    const num = (v, f) => (typeof v === "number" ? v : key === "psnr" && f.status === "identical" ? Infinity : NaN);
    rows.sort((a, b) => {
      let x = a.f[key], y = b.f[key];
      if (key === "bbox") { x = x ? x[2] * x[3] : -1; y = y ? y[2] * y[3] : -1; }
      else if (key === "status" || key === "detail") return dir * String(x ?? "").localeCompare(String(y ?? "")) || a.f.index - b.f.index;
      else { x = num(x, a.f); y = num(y, b.f); }
      // Frames without a value go last either way.
      if (Number.isNaN(x) !== Number.isNaN(y)) return Number.isNaN(x) ? 1 : -1;
      return (x === y || (Number.isNaN(x) && Number.isNaN(y)) ? 0 : x < y ? -dir : dir) || a.f.index - b.f.index;
    });
    tbody.replaceChildren(...rows.map((r) => r.tr));
    for (const th of head.children) th.removeAttribute("aria-sort");
    head.querySelector(`[data-key="${key}"]`).setAttribute("aria-sort", dir > 0 ? "ascending" : "descending");
  };
  head.addEventListener("click", (e) => {
    const th = e.target.closest("th");
    if (!th) return;
    const key = th.dataset.key;
    const cur = th.getAttribute("aria-sort");
    // First click: the worst first (large differences, low PSNR/SSIM); again: reversed.
    const m = METRICS.find((x) => x.key === key);
    const first = m ? (m.worse === "high" ? -1 : 1) : key === "mse" || key === "bbox" ? -1 : 1;
    sortBy(key, cur ? (cur === "ascending" ? -1 : 1) : first);
  });
  // The failing frames only, by default when there are some: passing frames are counted.
  const only = $("failing-only");
  const passingRows = rows.filter((r) => !failing(r.f)).length;
  only.checked = R.failed > 0;
  only.parentElement.hidden = !R.failed || !passingRows;
  const filter = () => {
    for (const r of rows) r.tr.hidden = only.checked && !failing(r.f);
    $("rows-hidden").textContent = only.checked && passingRows ?
      `(${passingRows} identical or within-tolerance frame${passingRows === 1 ? "" : "s"} hidden)` : "";
  };
  only.addEventListener("change", filter);
  filter();
  sortBy("index", 1);
  if (!frames.length) table.append(el("caption", { text: R.error ? "No frames: the comparison stopped before comparing." : "No frames." }));

  if (shown.length) select(R.worst !== null && pics.has(R.worst) ? R.worst : shown[0]);
  document.body.dataset.ready = "1";
})();
