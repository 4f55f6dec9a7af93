"""
check_addon.py - the tidepool Ocean add-on (blender/tidepool_ocean), installed from its
zip in headless Blender and checked (scripts/check-blender-addon.sh runs it):

    BLENDER_USER_SCRIPTS=DIR blender -b --factory-startup --python-exit-code 1 \
        --python tests/blender/check_addon.py -- --zip ZIP --bin TIDEPOOL --work DIR [--still PNG]

  1. Preferences > Add-ons > Install (bpy.ops.preferences.addon_install) from the zip, and
     enable; Add > Mesh > tidepool Ocean is in the menu;
  2. the operator with the default scene (the ocean example) bakes its 64 frames into a
     folder beside the .blend file, and they are the bytes `tidepool render` writes for
     the scene.json it leaves there (frames 0-3 and 63: a --range render of those);
  3. on a 128-texel scene: every vertex of the evaluated mesh moved by its texel (X, Y, Z
     in metres) at frames 1, 2 and 64; the frame after the last (65) is frame 1; the
     seams (the last row and column of vertices move as the first, a tile apart);
  4. the panel's settings (wind, resolution, seed, a swell) and Bake: a new grid and new
     maps, still each vertex on its texel, and `tidepool render` of the saved scene gives
     the same bytes; Save Scene writes JSON, Load Scene reads it (a bad one is refused
     with the program's file:line:col and changes nothing);
  5. a bake cancelled half-way leaves the last complete bake as it was, byte for byte, and
     no half-written map or work folder;
  6. with --still, a still of the add-on's sea (Cycles) for docs/stills/.
Exits 1 with one FAIL line per failed check.
"""
import argparse
import filecmp
import glob
import hashlib
import json
import os
import subprocess
import sys
import time

import addon_utils
import bpy
import numpy as np
import OpenImageIO as oiio

TOL = 1e-4  # metres (float32 vertex positions on a 64 m tile round at ~4e-6)
failures = []


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what, flush=True)
    if not ok:
        failures.append(what)


def exr(path):
    # ImageInput, not ImageBuf: ImageBuf reads through OpenImageIO's shared cache, which
    # keeps a file's first contents by name, so a re-bake's maps read as the old ones
    inp = oiio.ImageInput.open(path)
    assert inp, oiio.geterror()
    spec = inp.spec()
    px = inp.read_image(oiio.FLOAT)
    inp.close()
    return px.reshape(spec.height, spec.width, -1)


def vertex_check(ob, folder, frames, what):
    """Each vertex of the evaluated mesh against its texel at Blender frames 1, 2, F and
    F + 1 (files 0, 1, F - 1, 0); the seams; returns the largest error."""
    me = ob.data
    nv = len(me.vertices)
    n = int(round(nv ** 0.5)) - 1
    co = np.empty(nv * 3, np.float32)
    me.vertices.foreach_get("co", co)
    base = co.reshape(-1, 3)
    loops = np.empty(len(me.loops), np.int32)
    me.loops.foreach_get("vertex_index", loops)
    uvl = np.empty(len(me.loops) * 2, np.float32)
    me.uv_layers.active.data.foreach_get("uv", uvl)
    uv = np.zeros((nv, 2), np.float32)
    uv[loops] = uvl.reshape(-1, 2)
    ij = np.rint(uv * n).astype(np.int64)
    row, col = (n - 1 - ij[:, 1] % n), ij[:, 0] % n
    worst = 0.0
    got = {}
    for f, k in ((1, 0), (2, 1), (frames, frames - 1), (frames + 1, 0)):
        bpy.context.scene.frame_set(f)
        dg = bpy.context.evaluated_depsgraph_get()
        ev = ob.evaluated_get(dg)
        em = ev.to_mesh()
        c = np.empty(len(em.vertices) * 3, np.float32)
        em.vertices.foreach_get("co", c)
        ev.to_mesh_clear()
        D = c.reshape(-1, 3)[:nv] - base
        got[f] = D
        want = exr(os.path.join(folder, "disp_%04d.exr" % k))[row, col, :3]
        e = float(np.abs(D - want).max())
        worst = max(worst, e)
        check(e < TOL, "%s: frame %d: every vertex moved by its texel of disp_%04d.exr "
              "(largest difference %.3g m)" % (what, f, k, e))
    check(np.array_equal(got[frames + 1], got[1]),
          "%s: frame %d (after the last) is frame 1, vertex for vertex" % (what, frames + 1))
    # seams: vertex (n, j) moves as (0, j), (i, n) as (i, 0)
    key = {(int(a), int(b)): v for v, (a, b) in enumerate(ij)}
    D = got[1]
    sx = max(float(np.abs(D[key[(n, j)]] - D[key[(0, j)]]).max()) for j in range(n + 1))
    sy = max(float(np.abs(D[key[(i, n)]] - D[key[(i, 0)]]).max()) for i in range(n + 1))
    check(sx < TOL and sy < TOL, "%s: seams: the last column and row of vertices move as the "
          "first (%.3g, %.3g m)" % (what, sx, sy))
    return worst


def same_as_cli(prog, folder, work, name, ranges=None):
    """`tidepool render` of the bake's scene.json writes the bytes the bake wrote."""
    out = os.path.join(work, "cli_" + name)
    os.makedirs(out, exist_ok=True)
    sc = json.load(open(os.path.join(folder, "scene.json")))
    args = []
    for o in sc["outputs"]:
        args += ["-o", "%s=%s" % (o["mode"], os.path.join(out, o["path"]))]
    for r in ranges or [None]:
        cmd = [prog, "render", os.path.join(folder, "scene.json"), "-q", "-y"] + args
        if r:
            cmd += ["--range", r]
        subprocess.run(cmd, check=True)
    files = sorted(os.path.basename(p) for p in glob.glob(os.path.join(out, "*.exr")))
    same = [f for f in files if filecmp.cmp(os.path.join(out, f), os.path.join(folder, f),
                                            shallow=False)]
    return len(files), len(same)


def digest(folder):
    h = {}
    for p in sorted(glob.glob(os.path.join(folder, "*"))):
        h[os.path.basename(p)] = hashlib.sha256(open(p, "rb").read()).hexdigest()
    return h


def main():
    argv = sys.argv[sys.argv.index("--") + 1:]
    p = argparse.ArgumentParser(prog="check_addon.py")
    p.add_argument("--zip", required=True)
    p.add_argument("--bin", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--still")
    a = p.parse_args(argv)
    work = a.work
    os.environ["TIDEPOOL_PROGRAM"] = ""  # the add-on finds its own program

    # 1. install from the zip, enable
    bpy.ops.preferences.addon_install(filepath=a.zip, overwrite=True)
    bpy.ops.preferences.addon_enable(module="tidepool_ocean")
    mod = sys.modules.get("tidepool_ocean")
    where = os.path.dirname(mod.__file__) if mod else ""
    check(mod is not None and where.startswith(os.environ["BLENDER_USER_SCRIPTS"]),
          "installed from %s into %s and enabled" % (os.path.basename(a.zip), where))
    check(addon_utils.check("tidepool_ocean")[1], "the add-on is enabled")
    from tidepool_ocean import bake as tp_bake  # noqa: E402
    prog = tp_bake.program()
    check(prog == os.path.join(where, "bin", "tidepool"),
          "the bake runs the program in the zip (%s)" % prog)
    check(hasattr(bpy.types, "OBJECT_OT_tidepool_ocean_add") and any(
        "tidepool_ocean" in getattr(f, "__module__", "")
        for f in bpy.types.VIEW3D_MT_mesh_add._dyn_ui_initialize()),
        "Add > Mesh > tidepool Ocean is in the menu")

    for ob in list(bpy.data.objects):
        bpy.data.objects.remove(ob)
    blend = os.path.join(work, "sea.blend")
    bpy.ops.wm.save_as_mainfile(filepath=blend)

    # 2. the default scene: the ocean example
    t = time.time()
    r = bpy.ops.object.tidepool_ocean_add()
    ob = bpy.context.active_object
    folder = os.path.join(work, "tidepool_Ocean")
    disp = sorted(glob.glob(os.path.join(folder, "disp_*.exr")))
    foam = sorted(glob.glob(os.path.join(folder, "foam_*.exr")))
    check(r == {"FINISHED"} and ob.tidepool_ocean.is_ocean and len(disp) == 64
          and len(foam) == 64 and len(ob.data.vertices) == 513 ** 2,
          "Add > Mesh > tidepool Ocean: the example's 513 x 513 grid and 64 + 64 maps in "
          "%s (%.1f s)" % (folder, time.time() - t))
    check(not glob.glob(folder + ".*"), "no work folder left beside it")
    sc = bpy.context.scene
    check(sc.frame_start == 1 and sc.frame_end == 64 and sc.render.fps == 16,
          "the scene plays frames 1-64 at 16 fps")
    n, same = same_as_cli(prog, folder, work, "example", ["0-3", "63-63"])
    check(n == 10 and same == n, "byte-identical to `tidepool render` of its scene.json "
          "(%d of %d files: frames 0-3 and 63 of both maps)" % (same, n))
    if a.still:
        still(ob, a.still)
    for o in list(bpy.data.objects):
        bpy.data.objects.remove(o)

    # 3. a 128-texel tile of the same sea, from a scene file
    small = json.load(open(os.path.join(where, "example_ocean.json")))
    small["size"] = [128, 128]
    small["params"]["metres"] = 0.5
    small.pop("$schema", None)
    small_path = os.path.join(work, "small.json")
    json.dump(small, open(small_path, "w"))
    r = bpy.ops.object.tidepool_ocean_add(scene_file=small_path)
    ob = bpy.context.active_object
    folder = os.path.join(work, "tidepool_" + ob.name)
    check(r == {"FINISHED"} and len(ob.data.vertices) == 129 ** 2,
          "a 128-texel scene file: a 129 x 129 grid")
    vertex_check(ob, folder, 64, "128 texels")
    n, same = same_as_cli(prog, folder, work, "small")
    check(n == 128 and same == n, "byte-identical to `tidepool render` (%d of %d files)"
          % (same, n))

    # 4. the panel: new settings, Bake
    s = ob.tidepool_ocean
    before = digest(folder)
    s.wind, s.resolution, s.seed, s.swell, s.swell_direction = 13, 64, 11, True, 100
    s.tile = 48
    r = bpy.ops.object.tidepool_ocean_bake()
    sj = json.load(open(os.path.join(folder, "scene.json")))
    check(r == {"FINISHED"} and len(ob.data.vertices) == 65 ** 2 and digest(folder) != before
          and sj["ambient"]["wind"] == 13 and sj["size"] == [64, 64]
          and sj["params"]["metres"] == 0.75 and sj["ambient"]["swell"][0]["direction"] == 100,
          "the panel's wind, resolution, tile, seed and swell, baked again: a 65 x 65 grid, "
          "new maps")
    xs = [v.co.x for v in ob.data.vertices]
    check(abs(max(xs) - min(xs) - 48) < 1e-3, "the grid is the new tile, 48 m")
    vertex_check(ob, folder, 64, "re-baked")
    n, same = same_as_cli(prog, folder, work, "rebaked")
    check(n == 128 and same == n, "re-baked: byte-identical to `tidepool render` (%d of %d)"
          % (same, n))
    s.tile = 40
    r = bpy.ops.object.tidepool_ocean_bake()
    xs = [v.co.x for v in ob.data.vertices]
    check(r == {"FINISHED"} and abs(max(xs) - min(xs) - 40) < 1e-3,
          "a new tile size alone makes a new grid (40 m)")
    saved = os.path.join(work, "saved.json")
    r = bpy.ops.object.tidepool_ocean_save(filepath=saved)
    sv = json.load(open(saved))
    check(r == {"FINISHED"} and sv["ambient"]["wind"] == 13 and sv["size"] == [64, 64],
          "Save Scene writes the ocean's scene as tidepool JSON")
    ok = subprocess.run([prog, "validate", "-q", saved]).returncode == 0
    check(ok, "the saved scene is valid (tidepool validate)")
    sv["ambient"]["wind"] = 7
    sv["ambient"]["direction"] = 45
    json.dump(sv, open(saved, "w"))
    r = bpy.ops.object.tidepool_ocean_load(filepath=saved)
    check(r == {"FINISHED"} and s.wind == 7 and s.direction == 45 and s.resolution == 64,
          "Load Scene reads a tidepool JSON file into the settings")
    bad = os.path.join(work, "bad.json")
    sv["ambient"]["wind"] = -1
    json.dump(sv, open(bad, "w"))
    try:
        r = bpy.ops.object.tidepool_ocean_load(filepath=bad)
    except RuntimeError as e:  # the operator's ERROR report
        r = str(e)
    check(r != {"FINISHED"} and "ambient.wind" in str(r) and s.wind == 7,
          "a bad scene is refused with the program's message and changes nothing (%s)"
          % str(r).strip().splitlines()[-1][:120])

    # 5. a cancelled bake: the last complete bake stays as it was
    before = digest(folder)
    s.resolution = 256
    b = tp_bake.Bake(s.scene(), folder).start()
    t = time.time()
    while b.progress() < 2 and b.poll() is None and time.time() - t < 120:
        time.sleep(0.02)
    part = b.progress()
    b.cancel()
    check(0 < part < b.frames and digest(folder) == before and not glob.glob(folder + ".*")
          and b.proc.poll() is not None,
          "a bake cancelled after %d of %d frames leaves the last bake byte for byte and no "
          "half-written map or work folder" % (part, b.frames))

    if failures:
        print("check_addon: %d check(s) FAILED" % len(failures), flush=True)
        sys.exit(1)
    print("check_addon: all checks passed (Blender %s)" % bpy.app.version_string, flush=True)


def still(ob, path):
    """The add-on's sea at frame 1 (Cycles on the CPU): 2 x 2 tiles (Arrays), a sun, a sky."""
    sc = bpy.context.scene
    s = ob.tidepool_ocean
    for axis in (0, 1):
        arr = ob.modifiers.new("Array" + "XY"[axis], "ARRAY")
        arr.use_relative_offset = False
        arr.use_constant_offset = True
        arr.constant_offset_displace = (s.tile, 0, 0) if axis == 0 else (0, s.tile, 0)
        arr.use_merge_vertices = True
    cam = bpy.data.objects.new("cam", bpy.data.cameras.new("cam"))
    sc.collection.objects.link(cam)
    cam.location = (-0.45 * s.tile, -0.45 * s.tile, 6)
    cam.rotation_euler = (1.36, 0, -0.72)
    sc.camera = cam
    sun = bpy.data.objects.new("sun", bpy.data.lights.new("sun", "SUN"))
    sun.data.energy = 4
    sun.rotation_euler = (0.9, 0.2, 0.6)
    sc.collection.objects.link(sun)
    world = bpy.data.worlds.new("sky")
    world.use_nodes = True
    world.node_tree.nodes["Background"].inputs["Color"].default_value = (0.45, 0.6, 0.8, 1)
    sc.world = world
    sc.render.engine = "CYCLES"
    sc.cycles.device = "CPU"
    sc.cycles.samples = 32
    sc.cycles.use_denoising = False  # Debian's Blender has no OpenImageDenoise
    sc.render.resolution_x, sc.render.resolution_y = 640, 360
    sc.render.filepath = path
    sc.frame_set(1)
    bpy.ops.render.render(write_still=True)
    print("check_addon: wrote %s" % path, flush=True)


main()
