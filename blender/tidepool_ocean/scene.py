"""The ocean's settings as a tidepool scene (JSON), and back: no bpy here.

A scene is a dict as json.load gives it. The add-on keeps the whole scene it was built
from and changes only the members its panel shows, so a scene loaded from a file keeps
everything else it says. The bake writes the scene, with its "outputs" pointed at the
bake folder, as scene.json there; `tidepool render scene.json` of that file writes the
same maps, byte for byte.
"""
import copy
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
# bundled by make (blender-zip, install); in the source tree, the example itself
EXAMPLE = next((p for p in (os.path.join(HERE, "example_ocean.json"),
                            os.path.join(HERE, "..", "..", "scenes", "textures",
                                         "ocean_choppy.json")) if os.path.exists(p)),
               os.path.join(HERE, "example_ocean.json"))

# The maps the recipe reads (docs/textures.md), as the bake names them.
MAPS = (("displacement", "disp_%04d.exr"), ("foam", "foam_%04d.exr"))
SPECTRA = ("jonswap", "pierson-moskowitz", "tma", "phillips")


class SceneError(ValueError):
    """A scene the add-on cannot show as a square ocean tile (the message says why)."""


def example():
    """The ocean example (scenes/textures/ocean_choppy.json, bundled)."""
    with open(EXAMPLE, encoding="utf-8") as f:
        return json.load(f)


def settings_of(sc):
    """The panel's settings from a scene dict (raises SceneError if it is no ocean tile)."""
    size = sc.get("size")
    if not (isinstance(size, list) and len(size) == 2 and size[0] == size[1]):
        raise SceneError("the add-on makes square tiles; the scene's size is %r" % (size,))
    if sc.get("solver") != "airy" or not isinstance(sc.get("ambient"), dict):
        raise SceneError('an ocean is the airy solver with an "ambient" member')
    if sc.get("boundary") != "wrap":
        raise SceneError('an ocean tile wraps: the scene needs "boundary": "wrap"')
    am = sc["ambient"]
    params = sc.get("params", {})
    foam = am.get("foam", {})
    fps = sc.get("fps", 30)
    loop = sc.get("loop", {})
    n = int(size[0])
    metres = float(params.get("metres", 0.01))
    s = {
        "resolution": n,
        "tile": n * metres,
        "fps": int(fps),
        "loop": float(loop.get("duration", 0)),
        "seed": int(am.get("seed", sc.get("seed", 1))),
        "spectrum": am.get("spectrum", "jonswap"),
        "wind": float(am.get("wind", 5)),
        "direction": float(am.get("direction", 0)),
        "fetch": float(am.get("fetch", 20)),
        "depth": float(params.get("depth", 0)),
        "auto_height": "amplitude" not in am,
        # RMS height in metres (a height unit is a scene unit, `metres` long)
        "height": float(am.get("amplitude", 0.1)) * metres,
        "shortest": float(am.get("shortest", 0)),
        "spreading": float(am.get("spreading", 1)),
        "against": float(am.get("against", 0)),
        "choppiness": float(am.get("choppiness", 0)),
        "foam_threshold": float(foam.get("threshold", 0.4)),
        "foam_fade": float(foam.get("fade", 1)),
        "foam_low": float(foam.get("range", [0, 1])[0]),
        "foam_high": float(foam.get("range", [0, 1])[1]),
    }
    sw = am.get("swell") or []
    s["swell"] = bool(sw)
    first = sw[0] if sw else {}
    s["swell_wind"] = float(first.get("wind", s["wind"]))
    s["swell_direction"] = float(first.get("direction", 0))
    s["swell_fetch"] = float(first.get("fetch", s["fetch"]))
    s["swell_spreading"] = float(first.get("spreading", 1))
    return s


def apply(sc, s):
    """A copy of scene sc with the panel's settings s (a dict as settings_of gives)."""
    sc = copy.deepcopy(sc)
    n = int(s["resolution"])
    metres = s["tile"] / n
    sc["size"] = [n, n]
    sc["fps"] = int(s["fps"])
    sc["boundary"] = "wrap"
    sc["solver"] = "airy"
    params = sc.setdefault("params", {})
    params["metres"] = metres
    if s["spectrum"] == "tma" or s["depth"] > 0:
        params["depth"] = s["depth"]
    else:
        params.pop("depth", None)
    if s["loop"] > 0:
        sc.setdefault("loop", {})["duration"] = s["loop"]
    else:
        sc.pop("loop", None)
    am = sc.setdefault("ambient", {})
    am["spectrum"] = s["spectrum"]
    am["wind"] = s["wind"]
    am["direction"] = s["direction"]
    if s["spectrum"] in ("jonswap", "tma"):
        am["fetch"] = s["fetch"]
    else:
        am.pop("fetch", None)
    if "seed" in am:  # its own, or the scene's (which ambient waves default to)
        am["seed"] = int(s["seed"])
    else:
        sc["seed"] = int(s["seed"])
    if s["auto_height"]:
        am.pop("amplitude", None)
    else:
        am["amplitude"] = s["height"] / metres
    if s["shortest"] > 0:
        am["shortest"] = s["shortest"]
    else:
        am.pop("shortest", None)
    for key, default in (("spreading", 1.0), ("against", 0.0)):
        if s[key] != default:
            am[key] = s[key]
        else:
            am.pop(key, None)
    am["choppiness"] = s["choppiness"]
    if s["choppiness"] > 0:
        am["foam"] = {"threshold": s["foam_threshold"], "fade": s["foam_fade"],
                      "range": [s["foam_low"], s["foam_high"]]}
    else:
        am.pop("foam", None)
    sw = am.get("swell") or []
    if s["swell"]:
        first = dict(sw[0]) if sw else {}
        first.update(wind=s["swell_wind"], direction=s["swell_direction"],
                     spreading=s["swell_spreading"])
        if first.get("spectrum", "jonswap") in ("jonswap", "tma"):
            first["fetch"] = s["swell_fetch"]
        am["swell"] = [first] + list(sw[1:])
    else:
        am.pop("swell", None)
    return sc


def for_bake(sc):
    """The scene as the bake writes it: its outputs are the recipe's maps beside it."""
    sc = copy.deepcopy(sc)
    sc.pop("output", None)
    sc.pop("$schema", None)  # a path relative to where the scene came from
    sc["outputs"] = [{"mode": m, "path": p} for m, p in MAPS]
    if sc.get("ambient", {}).get("choppiness", 0) <= 0:
        sc["outputs"] = [o for o in sc["outputs"] if o["mode"] != "foam"]
    return sc


def frames_of(sc):
    """Frames of the loop (or of the scene)."""
    fps = sc.get("fps", 30)
    if "loop" in sc:
        return int(round(sc["loop"]["duration"] * fps))
    if "frames" in sc:
        return int(sc["frames"])
    return int(round(sc.get("duration", 1) * fps))


def dumps(sc):
    return json.dumps(sc, indent=2) + "\n"
