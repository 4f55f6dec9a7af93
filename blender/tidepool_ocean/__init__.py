"""tidepool Ocean: tidepool's looping, tiling ocean maps in Blender.

Add > Mesh > tidepool Ocean builds docs/textures.md's recipe (a grid of one vertex per
texel, a Displace modifier on the displacement sequence, a material with the foam mask)
from a tidepool scene (default: the ocean example) and bakes its maps with the `tidepool`
program into a folder beside the .blend file. The panel (Properties > Object > tidepool
Ocean) changes the sea and bakes again, and saves or loads the scene as tidepool JSON.
"""

bl_info = {
    "name": "tidepool Ocean",
    "author": "tidepool",
    "version": (0, 1, 0),
    "blender": (3, 4, 0),
    "location": "View3D > Add > Mesh > tidepool Ocean; Properties > Object > tidepool Ocean",
    "description": "Looping, tiling ocean maps baked by tidepool, with the recipe to show them",
    "doc_url": "https://github.com/tidepool/tidepool/blob/main/docs/textures.md",
    "category": "Add Mesh",
}

if "bpy" in locals():  # F8 / reload: the submodules again
    import importlib

    for _m in ("scene", "bake", "build", "ops"):
        if _m in locals():
            importlib.reload(locals()[_m])

import bpy  # noqa: E402

from . import ops  # noqa: E402


def menu_add(self, context):
    self.layout.operator(ops.OBJECT_OT_tidepool_ocean_add.bl_idname, text="tidepool Ocean",
                         icon="MOD_OCEAN")


def register():
    for cls in ops.CLASSES:
        bpy.utils.register_class(cls)
    bpy.types.Object.tidepool_ocean = bpy.props.PointerProperty(type=ops.TidepoolOceanSettings)
    bpy.types.VIEW3D_MT_mesh_add.append(menu_add)


def unregister():
    bpy.types.VIEW3D_MT_mesh_add.remove(menu_add)
    del bpy.types.Object.tidepool_ocean
    for cls in reversed(ops.CLASSES):
        bpy.utils.unregister_class(cls)
