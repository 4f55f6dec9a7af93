"""The add-on's settings, operators and panel (bpy)."""
import json
import os
import subprocess

import bpy
from bpy.props import BoolProperty, EnumProperty, FloatProperty, IntProperty, StringProperty

from . import bake as tp_bake
from . import build as tp_build
from . import scene as tp_scene

# the settings the panel shows, in scene.settings_of's names
KEYS = ("resolution", "tile", "fps", "loop", "seed", "spectrum", "wind", "direction", "fetch",
        "depth", "auto_height", "height", "shortest", "spreading", "against", "choppiness",
        "foam_threshold", "foam_fade", "foam_low", "foam_high", "swell", "swell_wind",
        "swell_direction", "swell_fetch", "swell_spreading")


class TidepoolOceanSettings(bpy.types.PropertyGroup):
    """An ocean tile's tidepool scene: the members the panel shows, and the whole scene."""
    is_ocean: BoolProperty(default=False, options={"HIDDEN"})
    scene_json: StringProperty(description="the tidepool scene the ocean was made from",
                               options={"HIDDEN"})
    folder: StringProperty(name="Maps", subtype="DIR_PATH",
                           description="where the last bake put the maps")
    resolution: IntProperty(name="Resolution", default=512, min=16, max=4096,
                            description="texels (and vertices) a side of the tile")
    tile: FloatProperty(name="Tile Size", default=64, min=0.5, max=100000, unit="LENGTH",
                        description="width of the tile in metres (it repeats seamlessly)")
    fps: IntProperty(name="Frame Rate", default=16, min=1, max=240)
    loop: FloatProperty(name="Loop Length", default=4, min=0, max=600, unit="TIME_ABSOLUTE",
                        description="seconds after which the sea repeats exactly (0: no loop)")
    seed: IntProperty(name="Seed", default=1, min=0)
    spectrum: EnumProperty(name="Spectrum", items=[
        ("jonswap", "JONSWAP", "a sea limited by its fetch (Hasselmann et al. 1973)"),
        ("pierson-moskowitz", "Pierson-Moskowitz", "the fully developed sea"),
        ("tma", "TMA", "JONSWAP in water of finite depth"),
        ("phillips", "Phillips", "Tessendorf's fully developed sea")])
    wind: FloatProperty(name="Wind Speed", default=10, min=0.1, max=100, unit="VELOCITY")
    direction: FloatProperty(name="Wind Direction", default=0, min=-360, max=360,
                             description="degrees the wind blows towards, from +X towards -Y")
    fetch: FloatProperty(name="Fetch", default=5000, min=1, max=1e7, unit="LENGTH",
                         description="open water upwind (JONSWAP, TMA)")
    depth: FloatProperty(name="Depth", default=0, min=0, max=1e5, unit="LENGTH",
                         description="water depth (0: deep water; TMA needs one)")
    auto_height: BoolProperty(name="Height From Wind", default=True,
                              description="the wave height the spectrum's law gives for the "
                                          "wind and fetch")
    height: FloatProperty(name="RMS Height", default=0.3, min=1e-4, max=100, unit="LENGTH",
                          description="RMS wave height (a quarter of the significant height)")
    shortest: FloatProperty(name="Shortest Waves", default=0, min=0, max=10000, unit="LENGTH")
    spreading: FloatProperty(name="Alignment", default=1, min=0, max=100,
                             description="s of the spreading cos^2s: higher, the waves follow "
                                         "the wind more closely")
    against: FloatProperty(name="Against Wind", default=0, min=0, max=1, subtype="FACTOR",
                           description="share of the energy travelling against the wind")
    choppiness: FloatProperty(name="Choppiness", default=1, min=0, max=10)
    foam_threshold: FloatProperty(name="Foam Coverage", default=0.4, min=-1, max=1,
                                  description="new foam where the surface's Jacobian is below "
                                              "this")
    foam_fade: FloatProperty(name="Foam Fade", default=1, min=0.01, max=60,
                             unit="TIME_ABSOLUTE")
    foam_low: FloatProperty(name="Foam Low", default=0.3, min=0, max=1,
                            description="foam thinner than this is not shown")
    foam_high: FloatProperty(name="Foam High", default=0.9, min=0, max=1,
                             description="foam thicker than this is full white")
    swell: BoolProperty(name="Swell", default=False,
                        description="a second wave system from another direction")
    swell_wind: FloatProperty(name="Swell Wind", default=8, min=0.1, max=100, unit="VELOCITY")
    swell_direction: FloatProperty(name="Swell Direction", default=90, min=-360, max=360)
    swell_fetch: FloatProperty(name="Swell Fetch", default=100000, min=1, max=1e7,
                               unit="LENGTH")
    swell_spreading: FloatProperty(name="Swell Alignment", default=10, min=0, max=100)

    def settings(self):
        return {k: getattr(self, k) for k in KEYS}

    def set_from(self, sc):
        s = tp_scene.settings_of(sc)  # raises SceneError first, so nothing half-set
        self.scene_json = json.dumps(sc)
        for k in KEYS:
            setattr(self, k, s[k])

    def scene(self):
        base = json.loads(self.scene_json) if self.scene_json else tp_scene.example()
        return tp_scene.apply(base, self.settings())


def maps_folder(ob):
    """The bake folder beside the .blend file: //tidepool_<object name>/."""
    if not bpy.data.filepath:
        return None
    name = bpy.path.clean_name(ob.name)
    return os.path.join(os.path.dirname(bpy.path.abspath(bpy.data.filepath)),
                        "tidepool_" + name)


class _Baking:
    """The modal half shared by the add and re-bake operators."""
    _timer = None
    _bake = None
    _ob = None

    def start_bake(self, context, ob):
        folder = maps_folder(ob)
        if folder is None:
            self.report({"ERROR"}, "Save the .blend file first: the maps go in a folder "
                                   "beside it")
            return {"CANCELLED"}
        settings = ob.tidepool_ocean
        try:
            self._bake = tp_bake.Bake(settings.scene(), folder).start()
        except (OSError, tp_scene.SceneError) as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        self._ob = ob
        if bpy.app.background or context.window is None:
            # no event loop: bake to the end here
            try:
                self._bake.wait()
            except tp_bake.BakeError as e:
                self.report({"ERROR"}, str(e))
                return {"CANCELLED"}
            self.finish(context)
            return {"FINISHED"}
        wm = context.window_manager
        wm.progress_begin(0, self._bake.frames)
        self._timer = wm.event_timer_add(0.1, window=context.window)
        wm.modal_handler_add(self)
        self.status(context, 0)
        return {"RUNNING_MODAL"}

    def status(self, context, n):
        if context.workspace is not None:
            context.workspace.status_text_set(
                None if n is None else "tidepool: baking frame %d of %d (Esc to cancel)"
                % (n, self._bake.frames))

    def stop(self, context):
        wm = context.window_manager
        if self._timer is not None:
            wm.event_timer_remove(self._timer)
            self._timer = None
        wm.progress_end()
        self.status(context, None)

    def modal(self, context, event):
        if event.type in {"ESC", "RIGHTMOUSE"} and event.value == "PRESS":
            self._bake.cancel()
            self.stop(context)
            self.report({"WARNING"}, "tidepool: bake cancelled; the maps are as they were")
            return {"CANCELLED"}
        if event.type != "TIMER":
            return {"PASS_THROUGH"}
        n = self._bake.progress()
        context.window_manager.progress_update(n)
        self.status(context, n)
        try:
            if self._bake.poll() is None:
                return {"PASS_THROUGH"}
        except tp_bake.BakeError as e:
            self.stop(context)
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        self.stop(context)
        self.finish(context)
        return {"FINISHED"}

    def finish(self, context):
        ob, s = self._ob, self._ob.tidepool_ocean
        s.folder = self._bake.dest
        sc = self._bake.sc
        n = int(sc["size"][0])
        tile = n * sc["params"]["metres"]
        foam = sc["ambient"].get("choppiness", 0) > 0
        tp_build.set_up(ob, self._bake.dest, n, tile, self._bake.frames, sc["fps"], foam)
        self.report({"INFO"}, "tidepool: %d frames baked into %s" % (self._bake.frames,
                                                                    self._bake.dest))

    def cancel(self, context):
        if self._bake is not None:
            self._bake.cancel()
        self.stop(context)


class OBJECT_OT_tidepool_ocean_add(_Baking, bpy.types.Operator):
    """Add a tidepool ocean tile: the grid, its displacement and foam, baked by tidepool"""
    bl_idname = "object.tidepool_ocean_add"
    bl_label = "tidepool Ocean"
    bl_options = {"REGISTER", "UNDO"}

    scene_file: StringProperty(name="Scene", subtype="FILE_PATH",
                               description="a tidepool scene (default: the ocean example)")

    @classmethod
    def poll(cls, context):
        return context.mode == "OBJECT"

    def execute(self, context):
        try:
            sc = (tp_bake.load_scene(bpy.path.abspath(self.scene_file)) if self.scene_file
                  else tp_scene.example())
            settings = tp_scene.settings_of(sc)
        except (OSError, ValueError) as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        ob = tp_build.grid_object("Ocean", settings["resolution"], settings["tile"],
                                  context.collection)
        ob.tidepool_ocean.is_ocean = True
        ob.tidepool_ocean.set_from(sc)
        ob.location = context.scene.cursor.location
        for o in context.selected_objects:
            o.select_set(False)
        ob.select_set(True)
        context.view_layer.objects.active = ob
        return self.start_bake(context, ob)

    def invoke(self, context, event):
        return self.execute(context)


class OBJECT_OT_tidepool_ocean_bake(_Baking, bpy.types.Operator):
    """Bake the ocean's maps again with its settings (Esc cancels)"""
    bl_idname = "object.tidepool_ocean_bake"
    bl_label = "Bake"

    @classmethod
    def poll(cls, context):
        ob = context.active_object
        return ob is not None and ob.tidepool_ocean.is_ocean

    def execute(self, context):
        ob = context.active_object
        s = ob.tidepool_ocean
        sc = s.scene()
        n = sc["size"][0]
        xs = [v.co.x for v in ob.data.vertices] or [0]
        if len(ob.data.vertices) != (n + 1) ** 2 or abs(
                max(xs) - min(xs) - s.tile) > 1e-3 * s.tile:
            # a new resolution or tile size: a new grid under the same object
            me = ob.data
            tmp = tp_build.grid_object("tmp", n, s.tile, context.collection)
            ob.data = tmp.data
            ob.data.name = me.name
            bpy.data.objects.remove(tmp)
            if me.users == 0:
                bpy.data.meshes.remove(me)
        return self.start_bake(context, ob)

    def invoke(self, context, event):
        return self.execute(context)


class OBJECT_OT_tidepool_ocean_save(bpy.types.Operator):
    """Save the ocean's scene as a tidepool JSON file"""
    bl_idname = "object.tidepool_ocean_save"
    bl_label = "Save Scene"

    filepath: StringProperty(subtype="FILE_PATH")
    filter_glob: StringProperty(default="*.json", options={"HIDDEN"})

    @classmethod
    def poll(cls, context):
        ob = context.active_object
        return ob is not None and ob.tidepool_ocean.is_ocean

    def execute(self, context):
        path = bpy.path.abspath(self.filepath)
        sc = context.active_object.tidepool_ocean.scene()
        sc.pop("$schema", None)
        try:
            tp_bake.save_scene(sc, path)
        except OSError as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        self.report({"INFO"}, "tidepool: scene saved to %s" % path)
        return {"FINISHED"}

    def invoke(self, context, event):
        if not self.filepath:
            self.filepath = bpy.path.clean_name(context.active_object.name) + ".json"
        context.window_manager.fileselect_add(self)
        return {"RUNNING_MODAL"}


class OBJECT_OT_tidepool_ocean_load(bpy.types.Operator):
    """Load a tidepool JSON scene into the ocean's settings (Bake makes its maps)"""
    bl_idname = "object.tidepool_ocean_load"
    bl_label = "Load Scene"

    filepath: StringProperty(subtype="FILE_PATH")
    filter_glob: StringProperty(default="*.json", options={"HIDDEN"})

    @classmethod
    def poll(cls, context):
        ob = context.active_object
        return ob is not None and ob.tidepool_ocean.is_ocean

    def execute(self, context):
        path = bpy.path.abspath(self.filepath)
        try:
            # the program's own check first: file:line:col and the reason
            r = subprocess.run([tp_bake.program(), "validate", "-q", path],
                               capture_output=True, text=True, check=False)
            if r.returncode != 0:
                raise ValueError(r.stderr.strip().splitlines()[-1] if r.stderr.strip()
                                 else "tidepool validate failed (exit %d)" % r.returncode)
            context.active_object.tidepool_ocean.set_from(tp_bake.load_scene(path))
        except (OSError, ValueError) as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        self.report({"INFO"}, "tidepool: loaded %s; Bake to make its maps" % path)
        return {"FINISHED"}

    def invoke(self, context, event):
        context.window_manager.fileselect_add(self)
        return {"RUNNING_MODAL"}


class OBJECT_PT_tidepool_ocean(bpy.types.Panel):
    bl_label = "tidepool Ocean"
    bl_space_type = "PROPERTIES"
    bl_region_type = "WINDOW"
    bl_context = "object"

    @classmethod
    def poll(cls, context):
        ob = context.active_object
        return ob is not None and ob.tidepool_ocean.is_ocean

    def draw(self, context):
        s = context.active_object.tidepool_ocean
        lay = self.layout
        lay.use_property_split = True
        col = lay.column()
        col.prop(s, "tile")
        col.prop(s, "resolution")
        col.prop(s, "loop")
        col.prop(s, "fps")
        col.prop(s, "seed")
        col = lay.column(heading="Wind")
        col.prop(s, "spectrum")
        col.prop(s, "wind")
        col.prop(s, "direction")
        sub = col.column()
        sub.active = s.spectrum in ("jonswap", "tma")
        sub.prop(s, "fetch")
        sub = col.column()
        sub.active = s.spectrum == "tma"
        sub.prop(s, "depth")
        col.prop(s, "spreading")
        col.prop(s, "against")
        col.prop(s, "auto_height")
        sub = col.column()
        sub.active = not s.auto_height
        sub.prop(s, "height")
        col.prop(s, "shortest")
        col = lay.column(heading="Waves")
        col.prop(s, "choppiness")
        sub = col.column()
        sub.active = s.choppiness > 0
        sub.prop(s, "foam_threshold")
        sub.prop(s, "foam_fade")
        sub.prop(s, "foam_low")
        sub.prop(s, "foam_high")
        col = lay.column(heading="Swell")
        col.prop(s, "swell")
        sub = col.column()
        sub.active = s.swell
        sub.prop(s, "swell_wind")
        sub.prop(s, "swell_direction")
        sub.prop(s, "swell_fetch")
        sub.prop(s, "swell_spreading")
        lay.prop(s, "folder")
        row = lay.row()
        row.operator(OBJECT_OT_tidepool_ocean_bake.bl_idname, icon="RENDER_ANIMATION")
        row = lay.row()
        row.operator(OBJECT_OT_tidepool_ocean_save.bl_idname, icon="EXPORT")
        row.operator(OBJECT_OT_tidepool_ocean_load.bl_idname, icon="IMPORT")


CLASSES = (TidepoolOceanSettings, OBJECT_OT_tidepool_ocean_add, OBJECT_OT_tidepool_ocean_bake,
           OBJECT_OT_tidepool_ocean_save, OBJECT_OT_tidepool_ocean_load,
           OBJECT_PT_tidepool_ocean)
