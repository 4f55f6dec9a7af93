"""The recipe of docs/textures.md in bpy: the grid, its Displace modifier on the
displacement sequence, the water material with the foam mask, the scene's frame rate and
range. Called by the operators only (nothing runs at import)."""
import os

import bpy


def _sequence(name, path, frames):
    img = bpy.data.images.get(name)
    if img is None:
        img = bpy.data.images.load(path, check_existing=False)
        img.name = name
    else:
        img.filepath = path
    img.source = "SEQUENCE"
    img.colorspace_settings.name = "Non-Color"
    img.reload()
    return img


def _user(iu, frames):
    # file 0000 at frame 1, cycling: frame F + 1 shows file 0000 again
    iu.frame_duration = frames
    iu.frame_start = 1
    iu.frame_offset = -1
    iu.use_cyclic = True
    iu.use_auto_refresh = True


def grid_object(name, n, tile, collection):
    """A grid of n x n cells (n + 1 vertices a side) `tile` metres wide, UVs 0..1: the
    vertex at UV (i/n, j/n) reads texel column i, row n - 1 - j from the top."""
    import bmesh  # noqa: PLC0415
    me = bpy.data.meshes.new(name)
    bm = bmesh.new()
    bm.loops.layers.uv.new("UVMap")
    bmesh.ops.create_grid(bm, x_segments=n, y_segments=n, size=tile / 2, calc_uvs=True)
    for f in bm.faces:
        f.smooth = True
    bm.to_mesh(me)
    bm.free()
    ob = bpy.data.objects.new(name, me)
    collection.objects.link(ob)
    return ob


def set_up(ob, folder, n, tile, frames, fps, foam):
    """The Displace modifier and the material of the recipe on grid ob, reading the maps
    in `folder`; the scene plays the loop's frames at its rate."""
    sc = bpy.context.scene
    sc.render.fps = fps
    sc.render.fps_base = 1
    sc.frame_start = 1
    sc.frame_end = frames
    key = ob.name
    tex = bpy.data.textures.get(key + " displacement") or bpy.data.textures.new(
        key + " displacement", "IMAGE")
    tex.image = _sequence(key + " disp", os.path.join(folder, "disp_0000.exr"), frames)
    _user(tex.image_user, frames)
    tex.use_interpolation = False  # each vertex its own texel
    tex.use_clamp = False          # keep the negative displacements
    mod = ob.modifiers.get("tidepool Displace") or ob.modifiers.new("tidepool Displace",
                                                                    "DISPLACE")
    mod.texture = tex
    mod.texture_coords = "UV"
    mod.direction = "RGB_TO_XYZ"
    mod.space = "LOCAL"
    mod.mid_level = 0.0
    mod.strength = 1.0

    mat = bpy.data.materials.get(key + " water") or bpy.data.materials.new(key + " water")
    mat.use_nodes = True
    nt = mat.node_tree
    nt.nodes.clear()
    out = nt.nodes.new("ShaderNodeOutputMaterial")
    water = nt.nodes.new("ShaderNodeBsdfPrincipled")
    water.inputs["Base Color"].default_value = (0.01, 0.05, 0.08, 1)
    water.inputs["Roughness"].default_value = 0.05
    if foam:
        white = nt.nodes.new("ShaderNodeBsdfDiffuse")
        white.inputs["Color"].default_value = (0.9, 0.9, 0.9, 1)
        mix = nt.nodes.new("ShaderNodeMixShader")
        uv = nt.nodes.new("ShaderNodeTexCoord")
        half = nt.nodes.new("ShaderNodeVectorMath")
        half.operation = "ADD"  # Blender centres texel i at (i + 0.5) / n
        half.inputs[1].default_value = (0.5 / n, 0.5 / n, 0)
        img = nt.nodes.new("ShaderNodeTexImage")
        img.name = "tidepool foam"
        img.image = _sequence(key + " foam", os.path.join(folder, "foam_0000.exr"), frames)
        _user(img.image_user, frames)
        img.interpolation = "Linear"
        img.extension = "REPEAT"
        nt.links.new(uv.outputs["UV"], half.inputs[0])
        nt.links.new(half.outputs["Vector"], img.inputs["Vector"])
        nt.links.new(img.outputs["Color"], mix.inputs["Fac"])
        nt.links.new(water.outputs["BSDF"], mix.inputs[1])
        nt.links.new(white.outputs["BSDF"], mix.inputs[2])
        nt.links.new(mix.outputs["Shader"], out.inputs["Surface"])
    else:
        nt.links.new(water.outputs["BSDF"], out.inputs["Surface"])
    if not ob.data.materials:
        ob.data.materials.append(mat)
    else:
        ob.data.materials[0] = mat
    ob.data.update()
