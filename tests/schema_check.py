"""Checks the JSON Schema of tidepool scenes against the example scenes and the loader.

usage: schema_check.py TIDEPOOL SCHEMA CASES SCENE...

1. every SCENE validates against SCHEMA (python3-jsonschema, Draft 7, as editors read it);
2. every case of CASES (a JSON array of {"why", "ok", "scene"}) gets the same verdict from
   the schema and from `TIDEPOOL validate` (exit 0 when ok, 3 when not);
3. the members each object of the schema allows are the ones the loader knows (read from
   its "unknown key (known keys: ...)" message), and each solver's "params" are the
   parameters `TIDEPOOL solvers NAME` lists, so a member added to one and not the other
   fails here by name.
Prints one line per disagreement and exits 1 if there was any."""
import json
import os
import re
import subprocess
import sys
import tempfile

import jsonschema

tidepool, schema_path, cases_path = sys.argv[1:4]
scenes = sys.argv[4:]
schema = json.load(open(schema_path))
jsonschema.Draft7Validator.check_schema(schema)
validator = jsonschema.Draft7Validator(schema)
bad = []


def schema_errors(doc):
    return sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))


def loader(doc, tmp):
    path = os.path.join(tmp, "scene.json")
    with open(path, "w") as f:
        json.dump(doc, f)
    r = subprocess.run([tidepool, "validate", path], capture_output=True, text=True)
    return r.returncode, r.stderr.strip()


# 1. the example scenes
for path in scenes:
    for e in schema_errors(json.load(open(path))):
        bad.append("%s: %s: %s" % (path, "/".join(map(str, e.absolute_path)) or "(top)", e.message))

with tempfile.TemporaryDirectory() as tmp:
    # 2. schema and loader agree on each case
    for case in json.load(open(cases_path)):
        errs = schema_errors(case["scene"])
        status, msg = loader(case["scene"], tmp)
        want = 0 if case["ok"] else 3
        if case["ok"] and errs:
            bad.append("case %r: the schema refuses it: %s" % (case["why"], errs[0].message))
        if not case["ok"] and not errs:
            bad.append("case %r: the schema accepts it" % case["why"])
        if status != want:
            bad.append("case %r: tidepool validate exits %d, expected %d: %s" % (case["why"], status, want, msg))

    # 3. the same members: put an unknown key into each object and read the loader's list
    base = {"format": "tidepool-scene/1"}
    probes = [
        ("", {}, schema),
        ("render", {"render": {}}, schema["properties"]["render"]),
        ("background", {"background": {}}, schema["properties"]["background"]),
        ("drops[0]", {"drops": [{"at": [1, 1]}]}, schema["properties"]["drops"]["items"]),
        ("boxes[0]", {"boxes": [{"size": [4, 4], "at": [9, 9]}]}, schema["properties"]["boxes"]["items"]),
        ("boxes[0].path[0]", {"boxes": [{"size": [4, 4], "path": [{"t": 0, "at": [9, 9]}]}]},
         schema["definitions"]["keyframe"]),
        ("tank", {"solver": "sph", "tank": {}}, schema["properties"]["tank"]),
        ("blocks[0]", {"solver": "sph", "blocks": [{"rect": [1, 1, 9, 9]}]},
         schema["properties"]["blocks"]["items"]),
        ("outputs[0]", {"outputs": [{"path": "x.mp4"}]}, schema["properties"]["outputs"]["items"]),
        ("maps", {"maps": {}}, schema["properties"]["maps"]),
        ("maps.height", {"maps": {"height": {}}}, schema["properties"]["maps"]["properties"]["height"]),
        ("maps.normal", {"maps": {"normal": {}}}, schema["properties"]["maps"]["properties"]["normal"]),
        ("maps.caustics", {"maps": {"caustics": {}}}, schema["properties"]["maps"]["properties"]["caustics"]),
        ("loop", {"loop": {"duration": 1}}, schema["properties"]["loop"]),
        ("flipbook", {"flipbook": {"grid": [2, 2]}}, schema["properties"]["flipbook"]),
        ("variants", {"variants": {"vary": {"seed": [1, 2]}}}, schema["properties"]["variants"]),
        ("ambient", {"solver": "airy", "ambient": {}}, schema["properties"]["ambient"]),
    ]
    for where, extra, sub in probes:
        doc = json.loads(json.dumps({**base, **extra}))
        node = doc
        for part in re.findall(r"[^.\[\]]+", where):
            node = node[int(part)] if part.isdigit() else node[part]
        node["zzzzzzzzzzzz"] = 1
        status, msg = loader(doc, tmp)
        m = re.search(r"unknown key \(known keys: ([^)]*)\)", msg)
        if not m:
            bad.append("%s: no list of known keys from the loader: %s" % (where or "(top)", msg))
            continue
        known = set(m.group(1).split(", "))
        allowed = set(sub["properties"])
        if known != allowed:
            bad.append("%s: the loader knows %s, the schema allows %s; differences: %s" % (
                where or "(top)", sorted(known), sorted(allowed), sorted(known ^ allowed)))

    # ...and each solver's parameters
    for rule in schema["allOf"]:
        cond = json.dumps(rule.get("if", {}))
        m = re.search(r'"solver": \{"const": "([a-z_0-9]+)"\}', cond)
        if not m:
            continue
        name = m.group(1)
        params = set(rule["then"]["properties"]["params"]["properties"])
        out = subprocess.run([tidepool, "solvers", name], capture_output=True, text=True).stdout
        listed = set(re.findall(r"^    ([a-z_0-9]+) ", out, re.M))
        if params != listed:
            bad.append("solver %s: tidepool solvers lists %s, the schema %s" % (name, sorted(listed), sorted(params)))
    listed_solvers = set(re.findall(r"^([a-z_0-9]+) - ", subprocess.run(
        [tidepool, "solvers"], capture_output=True, text=True).stdout, re.M))
    if listed_solvers != set(schema["properties"]["solver"]["enum"]):
        bad.append("solvers: tidepool has %s, the schema %s" % (
            sorted(listed_solvers), schema["properties"]["solver"]["enum"]))

for b in bad:
    print(b)
print("schema_check: %d scenes, %d disagreements" % (len(scenes), len(bad)))
sys.exit(1 if bad else 0)
