"""
check_ocean.py - docs/textures.md's Blender recipe, built in Blender and checked numerically.

Run inside Blender (tests/blender/check.sh does, after rendering the maps with tidepool):

    blender -b --factory-startup --python-exit-code 1 --python tests/blender/check_ocean.py -- \
        --maps DIR --size N --tile METRES --frames F --fps FPS [--height-dir DIR] [--still PNG]

DIR holds tidepool's disp_%04d.exr, normal_%04d.exr and foam_%04d.exr (N x N texels, a tile
of METRES, an exact loop of F frames at FPS); --height-dir the height_%04d.exr of the same
render. The scene is built as the recipe says (a grid of one vertex per texel, the Displace
modifier on an image-sequence texture, Array modifiers, the foam mask, the normal map on a
flat plane), then checked against the EXRs read by OpenImageIO (not by Blender):

  1. each vertex of the evaluated mesh moved by exactly the EXR's texel (X, Y, Z in metres;
     vertex u = i / N takes column i, v = j / N takes row N - 1 - j from the top);
  2. Blender frame f shows file (f - 1) mod F (frame 1 is file 0000; the sequence cycles);
  3. the axes as physics says: the horizontal displacement points up the slope towards the
     crests (Tessendorf: D = lambda grad h / |k| per wave), in X and in Y (a mirrored Y
     fails), vertices crowd where Z is high (+Z is up), and each vertex lands where
     tidepool's own height map (seen from above) has its height;
  4. the two Array copies meet without a seam;
  5. foam: the Image Texture at each vertex (a Cycles AOV seen straight down) is its texel,
     and foam (a Mix factor above 0) covers at most a third of the surface, in that render
     and in every frame of the loop;
  6. the normal map on a flat plane gives Cycles' normal pass the EXR's normals (X right,
     Y up the image, Z up);
  7. Blender's own Ocean modifier bakes the height into G (R, G, B = X, height, Y), which
     is why the docs warn against pointing its cache at tidepool's maps;
and optionally renders a still of the displaced, foamed sea with Cycles (--still).

--mutate NAME[,NAME...] builds the scene with known mistakes, to show that the check catches
them: clamp (the texture's Clamp left on), interp (its Interpolation left on), relative
(Arrays by relative offset after Displace), offset0 (image offset 0), normal01 (the EXR
normal straight into the Normal Map node), foamuv (the foam's UV not shifted half a texel),
foamrange (the foam without the example's ambient.foam.range: foamraw_%04d.exr in DIR);
literal is the recipe as first written (clamp, interp, relative, normal01, foamuv,
foamrange).
--still-only renders the still without checking. Exits 1 with one FAIL line per failed check.
"""
import argparse
import math
import os
import sys
import time

import bpy
import numpy as np
import OpenImageIO as oiio

TOL = 1e-4  # metres: float32 positions of a 64 m grid round at ~4e-6; half EXRs are exact

failures = []


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what, flush=True)
    if not ok:
        failures.append(what)


def read_exr(path, names):
    """The named channels of an EXR as float32 [rows from the top, columns, channel]."""
    buf = oiio.ImageBuf(path)
    if buf.has_error:
        raise SystemExit("check_ocean: cannot read %s: %s" % (path, buf.geterror()))
    spec = buf.spec()
    px = buf.get_pixels(oiio.FLOAT)
    idx = [list(spec.channelnames).index(n) for n in names]
    return np.ascontiguousarray(px[:, :, idx])


# --- the scene, as docs/textures.md says -------------------------------------------------

def load_sequence(path):
    img = bpy.data.images.load(path)
    img.source = 'SEQUENCE'
    img.colorspace_settings.name = 'Non-Color'
    return img


def set_user(iu, frames, offset):
    iu.frame_duration = frames
    iu.frame_start = 1
    iu.frame_offset = offset
    iu.use_cyclic = True
    iu.use_auto_refresh = True


def foam_kind(mutate):
    """The foam maps the recipe reads: the example's (shaped by its ambient.foam.range), or
    for --mutate foamrange the same foam unshaped."""
    return 'foamraw' if 'foamrange' in mutate else 'foam'


def build(a, mutate):
    sc = bpy.context.scene
    for ob in list(bpy.data.objects):
        bpy.data.objects.remove(ob)
    sc.render.fps = a.fps
    sc.frame_start = 1
    sc.frame_end = a.frames
    offset = 0 if 'offset0' in mutate else -1

    # 2. the grid: N subdivisions (N + 1 vertices a side), the tile's size
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=a.size, y_subdivisions=a.size,
                                    size=a.tile, calc_uvs=True)
    grid = bpy.context.active_object
    grid.name = 'sea'

    # 3. Displace: an Image texture on the displacement sequence
    tex = bpy.data.textures.new('disp', 'IMAGE')
    tex.image = load_sequence(os.path.join(a.maps, 'disp_0000.exr'))
    set_user(tex.image_user, a.frames, offset)
    tex.use_interpolation = 'interp' in mutate   # Image Sampling > Interpolation off
    tex.use_clamp = 'clamp' in mutate            # Colors > Clamp off (keeps negatives)
    mod = grid.modifiers.new('Displace', 'DISPLACE')
    mod.texture = tex
    mod.texture_coords = 'UV'
    mod.direction = 'RGB_TO_XYZ'
    mod.space = 'LOCAL'
    mod.mid_level = 0.0
    mod.strength = 1.0

    # 5. Array copies after Displace: a constant offset of one tile
    for axis in (0, 1):
        arr = grid.modifiers.new('Array' + 'XY'[axis], 'ARRAY')
        arr.count = 2
        if 'relative' in mutate:
            arr.use_relative_offset = True
            arr.relative_offset_displace = (1, 0, 0) if axis == 0 else (0, 1, 0)
        else:
            arr.use_relative_offset = False
            arr.use_constant_offset = True
            arr.constant_offset_displace = (a.tile, 0, 0) if axis == 0 else (0, a.tile, 0)
        arr.use_merge_vertices = True
        arr.merge_threshold = 1e-4
    bpy.ops.object.shade_smooth()

    # 4. foam: an Image Texture (UV moved by half a texel, Linear) as a Mix Shader factor
    mat = bpy.data.materials.new('water')
    mat.use_nodes = True
    nt = mat.node_tree
    nt.nodes.clear()
    out = nt.nodes.new('ShaderNodeOutputMaterial')
    water = nt.nodes.new('ShaderNodeBsdfPrincipled')
    water.inputs['Base Color'].default_value = (0.01, 0.05, 0.08, 1)
    water.inputs['Roughness'].default_value = 0.1
    white = nt.nodes.new('ShaderNodeBsdfDiffuse')
    white.inputs['Color'].default_value = (0.9, 0.9, 0.9, 1)
    mix = nt.nodes.new('ShaderNodeMixShader')
    uv = nt.nodes.new('ShaderNodeTexCoord')
    half = nt.nodes.new('ShaderNodeVectorMath')
    half.operation = 'ADD'
    d = 0 if 'foamuv' in mutate else 0.5 / a.size
    half.inputs[1].default_value = (d, d, 0)
    foam = nt.nodes.new('ShaderNodeTexImage')
    foam.image = load_sequence(os.path.join(a.maps, foam_kind(mutate) + '_0000.exr'))
    set_user(foam.image_user, a.frames, offset)
    foam.interpolation = 'Linear'
    foam.extension = 'REPEAT'
    nt.links.new(uv.outputs['UV'], half.inputs[0])
    nt.links.new(half.outputs['Vector'], foam.inputs['Vector'])
    nt.links.new(foam.outputs['Color'], mix.inputs['Fac'])
    nt.links.new(water.outputs['BSDF'], mix.inputs[1])
    nt.links.new(white.outputs['BSDF'], mix.inputs[2])
    nt.links.new(mix.outputs['Shader'], out.inputs['Surface'])
    aov = nt.nodes.new('ShaderNodeOutputAOV')  # for the check only: foam as a render pass
    aov.name = 'foam'
    nt.links.new(foam.outputs['Color'], aov.inputs['Color'])
    grid.data.materials.append(mat)
    return grid


def build_plane(a, mutate, png=None):
    """A flat plane, far from the grid, with the normal map (recipe: flat plane); png: a
    16-bit PNG normal map instead of the EXR, straight into the Normal Map node."""
    bpy.ops.mesh.primitive_plane_add(size=a.tile, location=(0, 0, -1000))
    plane = bpy.context.active_object
    plane.name = 'flat'
    mat = bpy.data.materials.new('flat')
    mat.use_nodes = True
    nt = mat.node_tree
    nt.nodes.clear()
    out = nt.nodes.new('ShaderNodeOutputMaterial')
    bsdf = nt.nodes.new('ShaderNodeBsdfDiffuse')
    img = nt.nodes.new('ShaderNodeTexImage')
    img.image = load_sequence(png or os.path.join(a.maps, 'normal_0000.exr'))
    set_user(img.image_user, a.frames, -1)
    img.interpolation = 'Linear'  # the default; exact at the texel centres seen here
    nmap = nt.nodes.new('ShaderNodeNormalMap')
    nmap.space = 'TANGENT'
    nmap.inputs['Strength'].default_value = 1.0
    if 'normal01' in mutate or png:
        nt.links.new(img.outputs['Color'], nmap.inputs['Color'])
    else:  # the EXR holds the unit normal; the Normal Map node wants n * 0.5 + 0.5
        enc = nt.nodes.new('ShaderNodeVectorMath')
        enc.operation = 'MULTIPLY_ADD'
        enc.inputs[1].default_value = (0.5, 0.5, 0.5)
        enc.inputs[2].default_value = (0.5, 0.5, 0.5)
        nt.links.new(img.outputs['Color'], enc.inputs[0])
        nt.links.new(enc.outputs['Vector'], nmap.inputs['Color'])
    nt.links.new(nmap.outputs['Normal'], bsdf.inputs['Normal'])
    nt.links.new(bsdf.outputs['BSDF'], out.inputs['Surface'])
    plane.data.materials.append(mat)
    return plane


# --- reading the evaluated grid ----------------------------------------------------------

def grid_layout(grid, n):
    """Original positions and the (i, j) of each vertex from its UV (u = i/n, v = j/n)."""
    me = grid.data
    nv = len(me.vertices)
    co = np.empty(nv * 3, np.float32)
    me.vertices.foreach_get('co', co)
    loops = np.empty(len(me.loops), np.int32)
    me.loops.foreach_get('vertex_index', loops)
    uvl = np.empty(len(me.loops) * 2, np.float32)
    me.uv_layers.active.data.foreach_get('uv', uvl)
    uv = np.zeros((nv, 2), np.float32)
    uv[loops] = uvl.reshape(-1, 2)
    ij = np.rint(uv * n).astype(np.int64)
    return co.reshape(-1, 3), uv, ij


def evaluated(grid):
    """Vertex positions of the evaluated mesh (with the Array modifiers and merging off,
    copy k's vertices are k * nv .. (k + 1) * nv - 1, nv the grid's vertex count)."""
    dg = bpy.context.evaluated_depsgraph_get()
    ev = grid.evaluated_get(dg)
    me = ev.to_mesh()
    co = np.empty(len(me.vertices) * 3, np.float32)
    me.vertices.foreach_get('co', co)
    ev.to_mesh_clear()
    return co.reshape(-1, 3)


def displacement_at(grid, base, frame):
    bpy.context.scene.frame_set(frame)
    return evaluated(grid)[:len(base)] - base


def texel_index(ij, n):
    """EXR (row from the top, column) for each vertex: column i mod n, row n-1 - (j mod n)."""
    col = ij[:, 0] % n
    row = (n - 1 - ij[:, 1] % n) % n
    return row, col


def main():
    argv = sys.argv[sys.argv.index('--') + 1:] if '--' in sys.argv else []
    p = argparse.ArgumentParser(prog='check_ocean.py')
    p.add_argument('--maps', required=True)
    p.add_argument('--size', type=int, required=True)
    p.add_argument('--tile', type=float, required=True)
    p.add_argument('--frames', type=int, required=True)
    p.add_argument('--fps', type=int, required=True)
    p.add_argument('--height-dir')
    p.add_argument('--still')
    p.add_argument('--still-size', default='480x270')
    p.add_argument('--still-samples', type=int, default=16)
    p.add_argument('--mutate', default='')
    p.add_argument('--still-only', action='store_true', help='build the scene, render the still')
    a = p.parse_args(argv)
    mut = set(a.mutate.split(',')) - {''}
    if 'literal' in mut:  # the recipe as first written
        mut |= {'clamp', 'interp', 'relative', 'normal01', 'foamuv', 'foamrange'}
    unknown = mut - {'literal', 'clamp', 'interp', 'relative', 'offset0', 'normal01', 'foamuv',
                     'foamrange'}
    if unknown:
        p.error('unknown --mutate %s' % ','.join(sorted(unknown)))
    a.mutate = mut
    n, F = a.size, a.frames
    print('check_ocean: Blender %s, %dx%d texels, %g m, %d frames at %d fps%s'
          % (bpy.app.version_string, n, n, a.tile, F, a.fps,
             ', mutated: ' + ','.join(sorted(mut)) if mut else ''), flush=True)

    def exr(kind, k, names):
        return read_exr(os.path.join(a.maps, '%s_%04d.exr' % (kind, k)), names)

    grid = build(a, a.mutate)
    if a.still_only:
        render_still(a, grid)
        return
    arrays = [m for m in grid.modifiers if m.type == 'ARRAY']
    for m in arrays:
        m.show_viewport = False
    base, uv, ij = grid_layout(grid, n)
    check(len(base) == (n + 1) ** 2 and ij.min() == 0 and ij.max() == n
          and np.allclose(uv * n, ij, atol=1e-3),
          'grid: %d vertices, one per texel (u, v = i/N, j/N)' % len(base))
    row, col = texel_index(ij, n)

    # 1. vertex displacement = the texel, frame 1 = file 0000
    D = displacement_at(grid, base, 1)
    want = exr('disp', 0, ['R', 'G', 'B'])[row, col]
    err = np.abs(D - want).max()
    check(err < TOL, 'frame 1: every vertex moved by its texel of disp_0000.exr '
          '(X, Y, Z in metres; largest difference %.3g m)' % err)
    if err >= TOL:  # say what it looks like
        d = exr('disp', 0, ['R', 'G', 'B'])
        hints = {
            'Y mirrored (image rows not flipped)': np.abs(D - d[ij[:, 1] % n, col]).max(),
            'negatives clamped to 0 (texture Clamp on)': np.abs(D - np.maximum(want, 0)).max(),
        }
        blur = 0.25 * (d + np.roll(d, 1, 1) + np.roll(d, -1, 0) + np.roll(np.roll(d, 1, 1), -1, 0))
        hints['two texels averaged (texture Interpolation on)'] = np.abs(D - blur[row, col]).max()
        for k, v in hints.items():
            print('      if %s: largest difference %.3g m' % (k, v))

    # 2. frame mapping: Blender frame f shows file (f - 1) mod F
    files = {}
    for f in (0, 2, F // 2, F, F + 1):
        D = displacement_at(grid, base, f)
        best, berr = None, 1e9
        for k in range(F):
            if k not in files:
                files[k] = exr('disp', k, ['R', 'G', 'B'])[row, col]
            e = np.abs(D - files[k]).max()
            if e < berr:
                best, berr = k, e
        check(best == (f - 1) % F and berr < TOL,
              'frame %d shows disp_%04d.exr (expected %04d; difference %.3g m)'
              % (f, best, (f - 1) % F, berr))

    # 3. axes: horizontal displacement towards the crests, crests up, same as the height map
    D = displacement_at(grid, base, 1)
    inner = (ij[:, 0] < n) & (ij[:, 1] < n)
    Z = np.zeros((n, n))
    DX = np.zeros((n, n))
    DY = np.zeros((n, n))
    Z[ij[inner, 1], ij[inner, 0]] = D[inner, 2]  # [j (world +Y), i (world +X)]
    DX[ij[inner, 1], ij[inner, 0]] = D[inner, 0]
    DY[ij[inner, 1], ij[inner, 0]] = D[inner, 1]
    h = a.tile / n
    dzdx = (np.roll(Z, -1, 1) - np.roll(Z, 1, 1)) / (2 * h)
    dzdy = (np.roll(Z, -1, 0) - np.roll(Z, 1, 0)) / (2 * h)
    cx = np.corrcoef(DX.ravel(), dzdx.ravel())[0, 1]
    cy = np.corrcoef(DY.ravel(), dzdy.ravel())[0, 1]
    check(cx > 0.3, 'X displacement points up the slope (towards crests): '
          'corr(Dx, dZ/dX) = %.2f' % cx)
    check(cy > 0.3, 'Y displacement points up the slope (towards crests): '
          'corr(Dy, dZ/dY) = %.2f' % cy)
    # the displaced cells' areas (Jacobian): small where Z is high when +Z is up
    PX = DX + np.arange(n)[None, :] * h
    PY = DY + np.arange(n)[:, None] * h
    ax = np.roll(PX, -1, 1) - PX
    ax[:, -1] += a.tile
    ay = np.roll(PY, -1, 0) - PY
    ay[-1, :] += a.tile
    bx = np.roll(PX, -1, 0) - PX
    by = np.roll(PY, -1, 1) - PY
    area = (ax * ay - bx * by) / (h * h)
    cz = np.corrcoef(area.ravel(), Z.ravel())[0, 1]
    check(cz < -0.3, 'vertices crowd where Z is high (crests up): corr(cell area, Z) = %.2f' % cz)
    if a.height_dir:
        H = read_exr(os.path.join(a.height_dir, 'height_0000.exr'), ['Y'])[:, :, 0]

        def sample(r, c):  # bilinear, periodic; r rows from the top, c columns
            r0, c0 = np.floor(r).astype(int), np.floor(c).astype(int)
            fr, fc = r - r0, c - c0
            g = lambda rr, cc: H[rr % n, cc % n]
            return ((1 - fr) * ((1 - fc) * g(r0, c0) + fc * g(r0, c0 + 1))
                    + fr * ((1 - fc) * g(r0 + 1, c0) + fc * g(r0 + 1, c0 + 1)))
        # the vertex at texel (row, col) goes to column col + Dx/h, row row - Dy/h (Y up)
        r_ok = np.sqrt(np.mean((sample(row - D[:, 1] / h, col + D[:, 0] / h) - D[:, 2]) ** 2))
        r_my = np.sqrt(np.mean((sample(row + D[:, 1] / h, col + D[:, 0] / h) - D[:, 2]) ** 2))
        r_0 = np.sqrt(np.mean((sample(row, col) - D[:, 2]) ** 2))
        check(r_ok < 0.5 * r_0 and r_ok < 0.5 * r_my,
              'each vertex lands where height_0000.exr has its Z: rms %.3g m '
              '(%.3g m with Y mirrored, %.3g m without moving)' % (r_ok, r_my, r_0))

    # 4. tiling: the Array copies meet without a seam (edge vertices coincide)
    for m in arrays:
        m.show_viewport = True
    for m in arrays:
        m.use_merge_vertices = False
    bpy.context.scene.frame_set(1)
    E = evaluated(grid)
    nv = len(base)
    check(len(E) == 4 * nv, 'two Arrays: 4 copies (%d vertices)' % len(E))
    c0, c1 = E[:nv], E[nv:2 * nv]
    left, right = ij[:, 0] == 0, ij[:, 0] == n
    o0 = np.argsort(ij[right, 1])
    o1 = np.argsort(ij[left, 1])
    seam = np.abs(c0[right][o0] - c1[left][o1]).max()
    check(seam < TOL, 'X seam: copy 2\'s left edge on copy 1\'s right edge (%.3g m)' % seam)
    c2 = E[2 * nv:3 * nv]
    top, bottom = ij[:, 1] == n, ij[:, 1] == 0
    seam = np.abs(c0[top][np.argsort(ij[top, 0])] - c2[bottom][np.argsort(ij[bottom, 0])]).max()
    check(seam < TOL, 'Y seam: copy 3\'s bottom edge on copy 1\'s top edge (%.3g m)' % seam)
    for m in arrays:
        m.use_merge_vertices = True

    # 5. foam on the undisplaced grid, seen straight down with a pixel centre on each
    # vertex: the foam pass there is the vertex's texel of foam_0000.exr
    sc = bpy.context.scene
    sc.view_layers[0].aovs.add().name = 'foam'
    for m in grid.modifiers:
        m.show_render = False
    got = top_down(a, -0.5 * a.tile / n, 0, 'foam', ['R'])
    for m in grid.modifiers:
        m.show_render = True
    fk = foam_kind(a.mutate)
    if got is not None:
        want = exr(fk, 0, ['Y'])
        e = np.abs(got - want).max()  # not 0: a ray's UV is a float barycentric sum
        check(e < 5e-3, 'foam: the Image Texture at each vertex is its texel of %s_0000.exr '
              '(largest difference %.3g)' % (fk, e))
        # covered: any foam at all (the foam the issue saw frost the sea was mostly faint);
        # the render's factor is its texel to within 1e-3 (above)
        seen = float((got > 2e-3).mean())
        worst = max(float((exr(fk, k, ['Y']) > 0).mean()) for k in range(F))
        check(seen <= 1 / 3 and worst <= 1 / 3,
              'foam cover: foam covers at most a third of the surface (factor > 0: '
              '%.1f%% in the render, at most %.1f%% in the %d frames)' % (100 * seen, 100 * worst, F))

    # 6. the normal map on a flat plane: Cycles' normal pass seen straight down; the EXR,
    # and the 16-bit PNG of the same frame (normalpng_0000.png, if the render wrote it)
    nrm = exr('normal', 0, ['R', 'G', 'B'])
    nrm = nrm / np.linalg.norm(nrm, axis=2, keepdims=True)
    png = os.path.join(a.maps, 'normalpng_0000.png')
    for src in ['normal_0000.exr'] + (['normalpng_0000.png'] if os.path.exists(png) else []):
        plane = build_plane(a, a.mutate, png if src.endswith('.png') else None)
        grid.hide_render = True
        got = top_down(a, 0, -1000, 'Normal', ['X', 'Y', 'Z'])
        bpy.data.objects.remove(plane)
        grid.hide_render = False
        if got is None:
            continue
        # Cycles bends a normal more than 45 degrees from the view (straight down here)
        # towards it (its valid-reflection rule), keeping the horizontal direction
        steep = nrm[:, :, 2] < 0.72
        e = np.abs(got - nrm)[~steep].max()
        hn, hg = nrm[steep][:, :2], got[steep][:, :2]
        cos = (hn * hg).sum(1) / np.maximum(np.linalg.norm(hn, axis=1) * np.linalg.norm(hg, axis=1), 1e-12)
        bent = cos.min() if steep.any() else 1.0
        check(e < 2e-3 and bent > 0.999,
              'flat plane: Cycles\' normal pass from %s is normal_0000.exr\'s normal (X right, '
              'Y up the image, Z up; largest difference %.3g; %d steeper than 45 degrees keep '
              'their direction: cos >= %.4f)' % (src, e, steep.sum(), bent))

    ocean_bake_layout()

    if a.still:
        render_still(a, grid)

    if failures:
        print('check_ocean: %d check(s) FAILED: the recipe in docs/textures.md does not hold '
              'in Blender %s' % (len(failures), bpy.app.version_string), flush=True)
        sys.exit(1)
    print('check_ocean: all checks passed (Blender %s)' % bpy.app.version_string, flush=True)


def whole_exr(path):
    """True if the file reads to its last pixel."""
    inp = oiio.ImageInput.open(path)
    if inp is None:
        oiio.geterror()
        return False
    ok = inp.read_image(oiio.FLOAT) is not None
    inp.close()
    return ok


def ocean_bake_layout():
    """docs/textures.md says the Ocean modifier's bake is R, G, B = X, height, Y (its
    ocean is Y up), unlike tidepool's X, Y, Z: bake a small ocean, compare its channels
    with the Z of the mesh the modifier generates on the same 16 x 16 grid."""
    import shutil
    import tempfile
    bpy.ops.mesh.primitive_plane_add(size=2, location=(0, 0, -2000))
    ob = bpy.context.active_object
    m = ob.modifiers.new('Ocean', 'OCEAN')
    m.geometry_mode = 'GENERATE'
    m.resolution = m.viewport_resolution = 4  # a 16 x 16 simulation grid
    m.spatial_size = 50
    m.choppiness = 1.0
    m.use_foam = False
    m.frame_start, m.frame_end = 1, 2
    tmp = tempfile.mkdtemp(prefix='tp-blender-ocean.')
    m.filepath = tmp + '/'
    bpy.context.view_layer.objects.active = ob
    bpy.context.scene.frame_set(1)
    bpy.ops.object.ocean_bake(modifier='Ocean')
    path = os.path.join(tmp, 'disp_0001.exr')
    # The bake is a job on a thread of its own, and without an event loop (blender -b)
    # nothing says it ended: frames are written in order, so frame 1 is whole once frame
    # 2's file reads (then the job writes no more). Up to a minute.
    last = os.path.join(tmp, 'disp_0002.exr')
    for _ in range(600):
        if os.path.exists(last) and whole_exr(last):
            break
        time.sleep(0.1)
    if not os.path.exists(path):
        check(False, 'the Ocean modifier baked %s' % path)
    else:
        px = read_exr(path, ['R', 'G', 'B'])
        dg = bpy.context.evaluated_depsgraph_get()
        me = ob.evaluated_get(dg).to_mesh()
        co = np.empty(len(me.vertices) * 3, np.float32)
        me.vertices.foreach_get('co', co)
        ob.evaluated_get(dg).to_mesh_clear()
        r = px.shape[0]
        z = np.sort(co.reshape(r + 1, r + 1, 3)[:r, :r, 2].ravel())  # local: no location
        d = [np.abs(np.sort(px[:, :, c].ravel()) - z).max() for c in range(3)]
        check(d[1] < 2e-3 and d[0] > 0.05 and d[2] > 0.05,
              'Blender\'s Ocean bake holds the height in G (its mesh Z vs R, G, B: %.3g, %.3g, '
              '%.3g m), not in B as tidepool\'s maps do' % tuple(d))
    shutil.rmtree(tmp, ignore_errors=True)
    bpy.data.objects.remove(ob)


def top_down(a, shift, z, layer, chans):
    """Renders one pass of what lies at height z straight down with Cycles (orthographic,
    one pixel per texel, the camera moved by `shift` in X and Y: pixel centres on the
    texel centres for 0, on the vertices for -tile / 2N); returns [rows, cols, chans]."""
    sc = bpy.context.scene
    n = a.size
    cam_data = bpy.data.cameras.new('top')
    cam_data.type = 'ORTHO'
    cam_data.ortho_scale = a.tile
    cam_data.clip_end = 10000
    cam = bpy.data.objects.new('top', cam_data)
    cam.location = (shift, shift, z + 100)
    sc.collection.objects.link(cam)
    sc.camera = cam
    sc.render.engine = 'CYCLES'
    sc.cycles.device = 'CPU'
    sc.cycles.samples = 1
    sc.cycles.use_denoising = False
    sc.cycles.pixel_filter_type = 'BOX'
    sc.cycles.filter_width = 0.01
    sc.render.resolution_x = sc.render.resolution_y = n
    sc.render.resolution_percentage = 100
    sc.view_layers[0].use_pass_normal = layer == 'Normal'
    sc.render.image_settings.file_format = 'OPEN_EXR_MULTILAYER'
    sc.render.image_settings.color_depth = '32'
    tmp = os.path.join(os.environ.get('TMPDIR', '/tmp'), 'tp-blender-%s-%d.exr' % (layer, os.getpid()))
    sc.render.filepath = tmp
    sc.frame_set(1)
    bpy.ops.render.render(write_still=True)
    bpy.data.objects.remove(cam)
    buf = oiio.ImageBuf(tmp)
    names = list(buf.spec().channelnames)
    px = buf.get_pixels(oiio.FLOAT)
    os.remove(tmp)
    pick = [i for c in chans for i, nm in enumerate(names) if nm.endswith('.%s.%s' % (layer, c))]
    if len(pick) != len(chans):
        check(False, 'pass %s in the render (channels %s)' % (layer, names))
        return None
    return px[:, :, pick]


def render_still(a, grid):
    """A view over the 2 x 2 tiles at frame 1: Cycles on the CPU, a Nishita sky, a sun."""
    sc = bpy.context.scene
    w, h = (int(v) for v in a.still_size.split('x'))
    cam_data = bpy.data.cameras.new('view')
    cam_data.lens = 30
    cam_data.clip_end = 1000
    cam = bpy.data.objects.new('view', cam_data)
    cam.location = (-0.45 * a.tile, -0.45 * a.tile, 0.11 * a.tile)
    cam.rotation_euler = (math.radians(68), 0, math.radians(-45))
    sc.collection.objects.link(cam)
    sc.camera = cam
    sun = bpy.data.lights.new('sun', 'SUN')
    sun.energy = 4
    sun.angle = math.radians(2)
    sun_ob = bpy.data.objects.new('sun', sun)
    sun_ob.rotation_euler = (math.radians(55), 0, math.radians(135 + 180))
    sc.collection.objects.link(sun_ob)
    world = bpy.data.worlds.new('sky')
    world.use_nodes = True
    sky = world.node_tree.nodes.new('ShaderNodeTexSky')
    sky.sky_type = 'NISHITA'
    sky.sun_elevation = math.radians(35)
    sky.sun_rotation = math.radians(135)
    bg = world.node_tree.nodes['Background']
    world.node_tree.links.new(sky.outputs['Color'], bg.inputs['Color'])
    bg.inputs['Strength'].default_value = 0.15
    sc.world = world
    sc.render.engine = 'CYCLES'
    sc.cycles.device = 'CPU'
    sc.cycles.samples = a.still_samples
    sc.cycles.use_denoising = False
    sc.cycles.pixel_filter_type = 'BLACKMAN_HARRIS'
    sc.cycles.filter_width = 1.5
    sc.view_layers[0].use_pass_normal = False
    sc.view_settings.view_transform = 'Filmic'
    sc.render.resolution_x, sc.render.resolution_y = w, h
    sc.render.resolution_percentage = 100
    sc.render.image_settings.file_format = 'PNG'
    sc.render.image_settings.color_mode = 'RGB'
    sc.render.image_settings.color_depth = '8'
    sc.render.image_settings.compression = 100
    sc.render.filepath = a.still
    sc.frame_set(1)
    bpy.ops.render.render(write_still=True)
    print('check_ocean: rendered %s' % a.still, flush=True)


main()
